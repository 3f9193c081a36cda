"""What several exercises share and the core does not need: the softmax exercises' inputs, reference
and diagnosis (`softmax_checks`) and bench workload (`softmax_bench`), the course's transformer block
with its per-operator profile (`model`, `profiling`), which exercise 6 profiles and exercise 9's
benchmark trains, and the form of the course's wrong variants (`variants`). No manifest lives here:
the catalogue skips folders whose name starts with an underscore."""
