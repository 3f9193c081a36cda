"""Measurements of how long the course makes its learners and maintainers wait (`tools.speed.grading_time`)."""
