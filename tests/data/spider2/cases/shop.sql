CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, price REAL, qty INTEGER, note TEXT);
INSERT INTO item VALUES (1,'apple',1.5,3,NULL),(2,'pear',2.25,3,'x'),(3,'fig',0.333333,NULL,'NULL'),
  (4,'kiwi',10.0,7,'True'),(5,'lime',9.999,7,'007');
CREATE TABLE pair(a INTEGER, b INTEGER);
INSERT INTO pair VALUES (1,2),(3,4),(5,6);
CREATE TABLE empty(x INTEGER, y TEXT);
CREATE TABLE mixed(v);
INSERT INTO mixed VALUES (1),('a'),(2.5),(NULL),(X'00FF');
