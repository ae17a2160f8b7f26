"""Running a sweep: the plan (what will run), Ray Tune glue, the driver's callbacks (store writer
and progress view), and status (what the store says ran)."""
