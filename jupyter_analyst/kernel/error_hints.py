"""Hints for the errors a model makes most on data: computed in the kernel, where the data is.

A ``KeyError`` or ``AttributeError`` raised on a DataFrame, or a ``NameError``, comes back
with what would have been right: the DataFrame's real columns (the closest ones first), the
names the kernel defines. The kernel's shell gets a handler for those three errors that adds
the hint to the exception as a note (so the traceback shows it last) and then shows the
traceback as usual.

The hint is worked out inside the sandbox, from the objects the step's own code touched,
and reaches the host only as the error's text: it is told to the model and written to the
notebook, and the host decides nothing on it. It is bounded (names cut, lists cut, the
whole cut) and a failure to work it out leaves the error as it was.
"""

ERROR_HINTS_CODE = """\
def _analyst_error_hints():
    import difflib, sys
    def listed(names, limit=60):
        names = [str(n)[:60] for n in names]
        more = " ... and %d more" % (len(names) - limit) if len(names) > limit else ""
        return ", ".join(names[:limit]) + more
    def columns_hint(frame, missing):
        names = [str(c) for c in frame.columns]
        close = difflib.get_close_matches(str(missing), names, n=3)
        near = "; closest: " + ", ".join(close) if close else ""
        return "the DataFrame's columns (%d): %s%s" % (len(names), listed(names), near)
    def dataframe_of(tb, DataFrame):
        frames = []
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        for frame in reversed(frames):
            if frame.f_locals is frame.f_globals:  # the cell itself: its names are the user's
                continue
            for local in ("self", "obj"):
                candidate = frame.f_locals.get(local)
                if isinstance(candidate, DataFrame):
                    return candidate
        return None
    def by_label(tb):
        while tb is not None:
            if type(tb.tb_frame.f_locals.get("self")).__name__ == "_LocIndexer":
                return True
            tb = tb.tb_next
        return False
    def hint(value, tb, user_ns):
        pd = sys.modules.get("pandas")
        DataFrame = getattr(pd, "DataFrame", None)
        if isinstance(value, NameError):
            hidden = getattr(get_ipython(), "user_ns_hidden", {})
            defined = [n for n, v in list(user_ns.items())
                       if not n.startswith("_") and n not in hidden and not isinstance(v, type(sys))]
            frames = [n for n in defined if DataFrame is not None and isinstance(user_ns[n], DataFrame)]
            close = difflib.get_close_matches(str(getattr(value, "name", "") or ""), defined, n=3)
            parts = ["closest defined names: " + ", ".join(close)] if close else []
            parts.append("DataFrames defined: " + listed(frames) if frames else "no DataFrame is defined")
            return "; ".join(parts)
        if DataFrame is None:
            return None
        if isinstance(value, KeyError):
            frame = dataframe_of(tb, DataFrame)
            if frame is None:
                return None
            if by_label(tb):  # .loc[...]: a row label, looked up in the index
                labels = list(frame.index[:20])
                return "the DataFrame's index (%d labels) starts: %s; columns: %s" % (
                    len(frame.index), listed(labels, 20), listed(frame.columns))
            return columns_hint(frame, value.args[0] if value.args else "")
        if isinstance(value, AttributeError):
            frame = getattr(value, "obj", None)
            if not isinstance(frame, DataFrame):
                frame = dataframe_of(tb, DataFrame)
            if frame is None or not str(value).startswith("'DataFrame' object"):
                return None
            return columns_hint(frame, getattr(value, "name", None) or str(value).rsplit(" ", 1)[-1].strip("'"))
        return None
    def hinted(shell, etype, value, tb, tb_offset=None):
        try:
            text = hint(value, tb, shell.user_ns)
            if text:
                text = "Hint: " + text[:2000]
                if text not in getattr(value, "__notes__", ()):
                    value.add_note(text)
        except Exception:
            pass
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)
    get_ipython().set_custom_exc((KeyError, NameError, AttributeError), hinted)
try:
    _analyst_error_hints()
except Exception:
    pass
del _analyst_error_hints
"""
