"""Display formatters of the code interpreter's Python kernels, installed at kernel start.

- `e2b/data`: a pandas DataFrame as columns of values (dates as ISO strings);
- `e2b/chart`: a matplotlib figure as the chart the @e2b/code-interpreter client reads
  (x_charts.py);
- PIL images: `Image.show()` displays instead of opening a viewer, and `Image.save(path)`
  displays the image too.
Nothing here imports pandas, matplotlib or PIL before the user's code does: DataFrames are
registered by name, and a figure's chart is a method that Figure is given when matplotlib.figure
is first imported (IPython's inline backend removes every formatter's entry for Figure when it
starts, so a registration would not last).
"""

import importlib.abc
import importlib.util
import json
import sys


def _dataframe(df):
    try:
        return {
            str(col): json.loads(df[col].to_json(orient="values", date_format="iso")) for col in df.columns
        }
    except Exception:
        return None


def _chart(figure):
    try:
        from x_charts import chart_of

        return chart_of(figure)
    except Exception:
        return {}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs `then(module)` once `name` has been imported."""

    def __init__(self, name, then):
        self.name, self.then = name, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module, then = spec.loader.exec_module, self.then

        def run(module):
            exec_module(module)
            then(module)

        spec.loader.exec_module = run
        return spec


def _after_import(name, then):
    if name in sys.modules:
        then(sys.modules[name])
    else:
        sys.meta_path.insert(0, _AfterImport(name, then))


def _give_figures_charts(module):
    module.Figure._x_chart_ = lambda self: _chart(self)


def _install_pil(ipython):
    """Patches PIL once it is imported: show() and save() display the image."""
    try:
        from PIL import Image
    except Exception:
        return
    if getattr(Image.Image, "_x_patched", False):
        return
    from IPython.display import display

    original_save = Image.Image.save

    def show(self, *args, **kwargs):
        display(self)

    def save(self, fp, *args, **kwargs):
        result = original_save(self, fp, *args, **kwargs)
        if isinstance(fp, str):
            display(self)
        return result

    Image.Image.show = show
    Image.Image.save = save
    Image.Image._x_patched = True


def install():
    from IPython import get_ipython

    ipython = get_ipython()
    if ipython is None or "e2b/chart" in ipython.display_formatter.formatters:
        return
    formatters = ipython.display_formatter.formatters
    from IPython.core.formatters import BaseFormatter

    class DataFormatter(BaseFormatter):
        format_type = "e2b/data"
        print_method = "_x_data_"
        _return_type = (dict,)

    class ChartFormatter(BaseFormatter):
        format_type = "e2b/chart"
        print_method = "_x_chart_"
        _return_type = (dict,)

    data = DataFormatter(parent=ipython.display_formatter)
    chart = ChartFormatter(parent=ipython.display_formatter)
    data.for_type_by_name("pandas.core.frame", "DataFrame", _dataframe)
    _after_import("matplotlib.figure", _give_figures_charts)
    formatters["e2b/data"] = data
    formatters["e2b/chart"] = chart
    ipython.display_formatter.active_types.extend(["e2b/data", "e2b/chart"])
    # PIL is patched after each cell that might have imported it
    ipython.events.register("post_run_cell", lambda *_: _install_pil(ipython))
    _install_pil(ipython)
