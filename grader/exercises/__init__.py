"""One folder per exercise: its manifest (``exercise.toml``), its checks (``spec.py``) and, in a
course checkout, the learner files the course's own tests grade against it (``wrong/``,
``natural/``, ``hostile/``). `grader.catalogue` reads the manifests."""
