CREATE TABLE books (id INTEGER PRIMARY KEY, title VARCHAR(40), author TEXT, year INT, copies INTEGER);
CREATE TABLE loans (id INTEGER PRIMARY KEY, book_id INTEGER, member TEXT, returned INTEGER);
