DROP TABLE activity_broadcasts;
