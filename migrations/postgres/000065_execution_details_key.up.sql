-- No query looks an execution detail up by seq: a notification's details
-- are read, in order, through execution_details_notification, which holds
-- seq. Its primary key index only cost each detail an index entry. seq
-- keeps numbering them.
ALTER TABLE execution_details DROP CONSTRAINT execution_details_pkey;
