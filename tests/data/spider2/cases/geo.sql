CREATE TABLE city(name TEXT, pop REAL, country TEXT, rank INTEGER);
INSERT INTO city VALUES ('Oslo',0.709,'NO',2),('Bergen',0.285,'NO',3),('Paris',2.161,'FR',1),
  ('Lyon',0.516,'FR',4),('Nice',0.342,'FR',5);
