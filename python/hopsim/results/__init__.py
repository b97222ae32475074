"""What a run leaves: its tables as columns and Arrow, spooled to disk while the core runs, written
to a run folder under a lock, and queried with SQL. Above scenario; below everything that reads runs."""
