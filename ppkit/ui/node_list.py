"""A keyboard-friendly list widget for the tree browser (an ``anywidget``).

Why not ``ipywidgets.Select``: inside JupyterLab a focused ``<select>`` in an output is
in the notebook's *command mode*, whose shortcuts (``ArrowUp``/``ArrowDown`` move
between cells, ``D D`` deletes one) take the keys before the list sees them, and its
rows are clipped at the box's width with no horizontal scroll. This list marks itself
``data-lm-suppress-shortcuts`` (Lumino then matches no shortcut for it), and the keys it
handles are marked handled (``preventDefault``: Lumino skips such a keydown) and stop
bubbling to the notebook, so they act on the list:

* ``ArrowUp`` / ``ArrowDown`` / ``PageUp`` / ``PageDown`` / ``Home`` / ``End`` move the selection;
* ``ArrowRight`` and ``Enter`` send ``{"event": "expand"}``, ``ArrowLeft`` sends
  ``{"event": "collapse"}`` (the tree view opens or closes the selected node).

Rows keep their full label on one line; the box scrolls both ways. The state is two
synced traits, ``options`` (``[[label, value], ...]``) and ``value``, so Python code and
tests drive it like any ipywidget. Only the view is JavaScript (``_ESM`` below).
"""

from __future__ import annotations

from functools import cache

from ..core.errors import MissingDependency

__all__ = ["node_list"]

_ESM = r"""
function render({ model, el }) {
  const box = document.createElement("div");
  box.className = "ppkit-node-list";
  box.tabIndex = 0;
  box.setAttribute("role", "listbox");
  // JupyterLab (Lumino) matches no keyboard shortcut on an element carrying this attribute
  box.setAttribute("data-lm-suppress-shortcuts", "true");
  box.style.cssText = "position:relative;overflow:auto;border:1px solid #bbb;background:#fff;color:#111;" +
    "font-size:12px;line-height:1.5;white-space:pre;word-break:normal;outline-offset:-2px;";
  const inner = document.createElement("div");
  inner.style.cssText = "display:inline-block;min-width:100%;";  // as wide as the longest row: scrolls sideways
  box.appendChild(inner);
  el.appendChild(box);

  const values = () => model.get("options").map((o) => o[1]);
  function choose(v) {
    if (v !== undefined && v !== model.get("value")) {
      model.set("value", v);
      model.save_changes();
    }
  }
  function draw() {
    box.style.height = (model.get("rows") * 1.5 + 0.2) + "em";
    inner.textContent = "";
    const value = model.get("value");
    let selected = null;
    for (const [label, v] of model.get("options")) {
      const row = document.createElement("div");
      row.setAttribute("role", "option");
      row.dataset.value = v;
      row.textContent = label;
      row.style.cssText = "padding:0 6px;cursor:pointer;";
      if (v === value) {
        row.setAttribute("aria-selected", "true");
        row.style.background = "#1a66c9";
        row.style.color = "#fff";
        selected = row;
      }
      row.addEventListener("click", () => { choose(v); box.focus(); });
      inner.appendChild(row);
    }
    if (selected) reveal(selected);
  }
  // keep the selection in view without scrolling the notebook around it; before the box is laid out
  // (the first draw, while the output is attached) its rows have no offsets yet: try again on the next frames
  function reveal(row, tries = 60) {
    if (!box.clientHeight) {
      if (tries > 0) requestAnimationFrame(() => reveal(row, tries - 1));
      return;
    }
    const top = row.offsetTop, bottom = top + row.offsetHeight;
    if (top < box.scrollTop) box.scrollTop = top;
    else if (bottom > box.scrollTop + box.clientHeight) box.scrollTop = Math.max(0, bottom - box.clientHeight / 2);
  }
  box.addEventListener("keydown", (e) => {
    const vs = values();
    const i = vs.indexOf(model.get("value"));
    const page = Math.max(1, model.get("rows") - 1);
    const moves = { ArrowDown: i + 1, ArrowUp: i < 0 ? 0 : i - 1, PageDown: i + page, PageUp: i - page,
                    Home: 0, End: vs.length - 1 };
    if (e.key in moves) {
      choose(vs[Math.min(vs.length - 1, Math.max(0, moves[e.key]))]);
    } else if (e.key === "ArrowRight" || e.key === "Enter") {
      model.send({ event: "expand" });
    } else if (e.key === "ArrowLeft") {
      model.send({ event: "collapse" });
    } else {
      return;
    }
    e.preventDefault();   // no page scrolling
    e.stopPropagation();  // and no notebook command
  });
  model.on("change:options", draw);
  model.on("change:value", draw);
  model.on("change:rows", draw);
  draw();
}
export default { render };
"""


@cache
def _node_list_class():
    try:
        import anywidget
        import traitlets
    except ImportError:
        raise MissingDependency("the tree browser needs anywidget: pip install 'ppkit[notebooks]'") from None

    class NodeList(anywidget.AnyWidget):
        """A list of ``(label, value)`` rows with one selected ``value`` (``None``: nothing selected)."""

        _esm = _ESM
        options = traitlets.List().tag(sync=True)  # [[label, value], ...]
        value = traitlets.Unicode(None, allow_none=True).tag(sync=True)
        rows = traitlets.Int(20).tag(sync=True)

    return NodeList


def node_list(options: list[tuple[str, str]], value: str | None, *, rows: int = 20, layout=None):
    """A new list widget showing ``options`` with ``value`` selected.

    >>> w = node_list([("first", "a"), ("second", "b")], "a")   # doctest: +SKIP
    >>> w.value = "b"                                           # doctest: +SKIP
    """
    kw = {"layout": layout} if layout is not None else {}
    return _node_list_class()(options=[list(o) for o in options], value=value, rows=rows, **kw)
