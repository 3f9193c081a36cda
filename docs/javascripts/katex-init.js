// Render the math that pymdownx.arithmatex (generic mode) leaves in the page as \( \) and \[ \].
// KaTeX is bundled under docs/assets/katex/, so this works with no network.
(function () {
  function render(root) {
    if (typeof renderMathInElement !== "function") return;
    renderMathInElement(root, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
  }
  function renderArithmatex(root) {
    root.querySelectorAll(".arithmatex").forEach(function (el) { render(el); });
  }
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { renderArithmatex(document.body); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { renderArithmatex(document.body); });
  }
})();
