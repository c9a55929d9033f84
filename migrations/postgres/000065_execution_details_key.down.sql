ALTER TABLE execution_details ADD PRIMARY KEY (seq);
