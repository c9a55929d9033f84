ALTER TABLE environments DROP COLUMN color;
