-- PostgreSQL's twin of this migration drops an index no query reads: the
-- primary key on execution_details.seq. Here seq is the rowid, the table's
-- own key, which costs no index.
SELECT 1;
