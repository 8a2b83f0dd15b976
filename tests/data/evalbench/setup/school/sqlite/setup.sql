CREATE TABLE students (id INTEGER PRIMARY KEY, name TEXT, grade INTEGER, class TEXT);
CREATE TABLE courses (id INTEGER PRIMARY KEY, title TEXT, credits INTEGER);
CREATE TABLE enrollments (student_id INTEGER, course_id INTEGER, score REAL);
