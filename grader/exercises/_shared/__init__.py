"""What several exercise folders share: helpers of a family of exercises, and the form of the course's
wrong variants (`variants`). No manifest lives here: the catalogue skips folders whose name starts with
an underscore."""
