"""Charts out of matplotlib figures, in the shape @e2b/code-interpreter's `chart` has.

A figure with several axes is a `superchart` of one chart per axes. An axes is classified by
what it draws: only lines is a `line` chart; box patches with lines a `box_and_whisker`; only
point collections a `scatter`; only wedges a `pie`; only rectangles a `bar`; anything else
`unknown`. Extraction that fails yields {} rather than an error in the user's cell.
"""

import re

from matplotlib.collections import PathCollection
from matplotlib.dates import DateLocator, num2date
from matplotlib.lines import Line2D
from matplotlib.patches import PathPatch, Rectangle, Wedge

UNIT = re.compile(r"^(.*?)\s*[\(\[]([^\)\]]+)[\)\]]\s*$")


def chart_of(figure):
    axes = [ax for ax in figure.get_axes() if _has_data(ax)]
    if not axes:
        return {}
    if len(axes) > 1:
        title = figure._suptitle.get_text() if getattr(figure, "_suptitle", None) else None
        return {"type": "superchart", "title": title or None, "elements": [_axes_chart(ax) for ax in axes]}
    return _axes_chart(axes[0])


def _has_data(ax):
    return bool(ax.lines or ax.collections or ax.patches)


def _axes_chart(ax):
    lines = [l for l in ax.lines if not _is_grid(l)]
    collections, patches = list(ax.collections), list(ax.patches)
    if lines and not collections and not patches:
        return _line(ax, lines)
    if patches and all(isinstance(p, PathPatch) for p in patches) and lines and not collections:
        return _box(ax, patches, lines)
    if collections and all(isinstance(c, PathCollection) for c in collections) and not patches and not lines:
        return _scatter(ax, collections)
    if patches and all(isinstance(p, Wedge) for p in patches) and not collections:
        return _pie(ax, patches)
    if patches and all(isinstance(p, Rectangle) for p in patches) and not collections:
        return _bar(ax)
    return {"type": "unknown", "title": _title(ax), "elements": []}


def _is_grid(line):
    return line.get_gid() == "grid" or line.get_label().startswith("_grid")


def _title(ax):
    return ax.get_title() or None


def _label_and_unit(text):
    if not text:
        return None, None
    m = UNIT.match(text)
    return (text, m.group(2)) if m else (text, None)


def _is_date(axis):
    # a date axis has date ticks, whichever date converter matplotlib's version registers
    return isinstance(axis.get_major_locator(), DateLocator)


def _value(axis, v):
    """A value in the axis's own units (floats: matplotlib has converted dates) as JSON."""
    if _is_date(axis):
        return num2date(float(v)).replace(tzinfo=None).isoformat()
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


def _axis_fields(ax, name):
    axis = ax.xaxis if name == "x" else ax.yaxis
    label, unit = _label_and_unit(axis.get_label_text())
    ticks = list(axis.get_ticklocs())
    tick_labels = [t.get_text() for t in axis.get_ticklabels()]
    if _is_date(axis):
        scale = "datetime"
    elif ticks == list(range(len(ticks))) and tick_labels and not all(_numeric(t) for t in tick_labels):
        scale = "categorical"
    else:
        scale = ax.get_xscale() if name == "x" else ax.get_yscale()
    return {
        f"{name}_label": label,
        f"{name}_unit": unit,
        f"{name}_ticks": [_value(axis, t) for t in ticks],
        f"{name}_tick_labels": tick_labels,
        f"{name}_scale": scale,
    }


def _numeric(text):
    try:
        float(text.replace("\u2212", "-"))
        return True
    except ValueError:
        return False


def _two_d(ax, kind, elements, ticks=True):
    chart = {"type": kind, "title": _title(ax)}
    for name in ("x", "y"):
        fields = _axis_fields(ax, name)
        chart[f"{name}_label"] = fields[f"{name}_label"]
        chart[f"{name}_unit"] = fields[f"{name}_unit"]
        if ticks:
            for key in ("ticks", "tick_labels", "scale"):
                chart[f"{name}_{key}"] = fields[f"{name}_{key}"]
    chart["elements"] = elements
    return chart


def _element_label(label, index, kind):
    return f"{kind} {index + 1}" if not label or label.startswith("_") else label


def _line(ax, lines):
    elements = []
    for i, line in enumerate(lines):
        xs, ys = line.get_xdata(orig=False), line.get_ydata(orig=False)
        points = [[_value(ax.xaxis, x), _value(ax.yaxis, y)] for x, y in zip(xs, ys)]
        elements.append({"label": _element_label(line.get_label(), i, "Line"), "points": points})
    return _two_d(ax, "line", elements)


def _scatter(ax, collections):
    elements = []
    for i, c in enumerate(collections):
        points = [[_value(ax.xaxis, x), _value(ax.yaxis, y)] for x, y in c.get_offsets()]
        elements.append({"label": _element_label(c.get_label(), i, "Scatter"), "points": points})
    return _two_d(ax, "scatter", elements)


def _tick_label_at(axis, position):
    for loc, label in zip(axis.get_ticklocs(), axis.get_ticklabels()):
        if abs(loc - position) < 1e-9:
            return label.get_text()
    return str(position)


def _bar(ax):
    containers = [c for c in ax.containers if hasattr(c, "patches")] or [type("C", (), {"patches": ax.patches, "get_label": lambda self: ""})()]
    rects = [r for c in containers for r in c.patches]
    horizontal = len({round(r.get_height(), 9) for r in rects}) == 1 and len({round(r.get_width(), 9) for r in rects}) > 1
    elements = []
    for gi, container in enumerate(containers):
        group = container.get_label()
        group = group if group and not group.startswith("_") else f"Group {gi + 1}"
        for r in container.patches:
            if horizontal:
                label = _tick_label_at(ax.yaxis, r.get_y() + r.get_height() / 2)
                value = r.get_width()
            else:
                label = _tick_label_at(ax.xaxis, r.get_x() + r.get_width() / 2)
                value = r.get_height()
            elements.append({"label": label, "group": group, "value": float(value)})
    chart = _two_d(ax, "bar", elements, ticks=False)
    if horizontal:
        chart["x_label"], chart["y_label"] = chart["y_label"], chart["x_label"]
        chart["x_unit"], chart["y_unit"] = chart["y_unit"], chart["x_unit"]
    return chart


def _pie(ax, wedges):
    def sig(v):
        # wedges are drawn from fractions of 360 degrees: 6 significant digits undo the float error
        return float(f"{v:.6g}")

    elements = [
        {"label": w.get_label(), "angle": sig(abs(w.theta2 - w.theta1)), "radius": sig(w.r)} for w in wedges
    ]
    return {"type": "pie", "title": _title(ax), "elements": elements}


def _box(ax, boxes, lines):
    elements = []
    for box in boxes:
        verts = box.get_path().vertices
        verts = box.get_patch_transform().transform(verts) if box.get_patch_transform() else verts
        x0, x1 = float(min(verts[:, 0])), float(max(verts[:, 0]))
        q1, q3 = float(min(verts[:, 1])), float(max(verts[:, 1]))
        centre = (x0 + x1) / 2
        median, lows, highs, outliers = None, [], [], []
        for line in lines:
            xs, ys = [float(v) for v in line.get_xdata()], [float(v) for v in line.get_ydata()]
            if not xs or min(xs) < x0 - 1e-9 or max(xs) > x1 + 1e-9:
                continue
            if line.get_linestyle() in ("None", "none", "") and line.get_marker() not in (None, "None", "none", ""):
                outliers.extend(ys)
            elif len(set(ys)) == 1 and q1 - 1e-9 <= ys[0] <= q3 + 1e-9 and min(xs) <= x0 + 1e-9 and max(xs) >= x1 - 1e-9:
                median = ys[0]
            elif len(set(xs)) == 1:
                lows.append(min(ys))
                highs.append(max(ys))
        elements.append(
            {
                "label": _tick_label_at(ax.xaxis, centre),
                "min": min(lows) if lows else q1,
                "first_quartile": q1,
                "median": median,
                "third_quartile": q3,
                "max": max(highs) if highs else q3,
                "outliers": outliers,
            }
        )
    return _two_d(ax, "box_and_whisker", elements, ticks=False)
