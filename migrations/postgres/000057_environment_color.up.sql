-- The color the team gave an environment, kept for the clients that show
-- it: environments beyond Development and Production are created with one.
ALTER TABLE environments ADD COLUMN color TEXT NOT NULL DEFAULT '';
