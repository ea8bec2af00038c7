CREATE TABLE greeted (name text PRIMARY KEY);
