DROP TABLE translations;
