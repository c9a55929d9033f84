DROP TABLE contexts;
