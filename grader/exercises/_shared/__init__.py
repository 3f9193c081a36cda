"""What several exercises share and the core does not need: the softmax exercises' inputs, reference
and diagnosis (`softmax_checks`), and the course's transformer block with its per-operator profile
(`model`, `profiling`), which exercise 6 profiles and exercise 9's benchmark trains."""
