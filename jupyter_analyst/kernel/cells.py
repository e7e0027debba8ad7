"""The host's own cells: what a new kernel runs first, and what waits for killed children.

They run before, or between, the model's steps, as host code: nothing in them comes from the
model. ``SETUP_CODE`` also runs in a re-executed audit notebook (``analyst.connect``).
"""

SETUP_CODE = """\
import os as _analyst_os
if _analyst_os.path.islink("outputs") or _analyst_os.path.isfile("outputs"):
    _analyst_os.remove("outputs")
_analyst_os.makedirs("outputs", exist_ok=True)
del _analyst_os
import pandas as pd
import matplotlib
try:
    get_ipython().run_line_magic("matplotlib", "inline")
except Exception:
    pass
import matplotlib.pyplot as plt
plt.rcParams["figure.dpi"] = 100
plt.rcParams["savefig.dpi"] = 100
plt.rcParams["svg.hashsalt"] = "jupyter-analyst"
try:
    from matplotlib_inline.backend_inline import set_matplotlib_formats
    set_matplotlib_formats("png")
except Exception:
    pass
"""

#: The host's own machinery in the agent's kernel made still (not in a notebook's own kernel,
#: where SETUP_CODE also runs: there nothing is checked from outside).
STILL_CODE = """\
def _analyst_in_pieces(stream_class, piece=4 << 20):
    # Output goes out in messages of at most 4 MB: the host reads no message whole past
    # SandboxPolicy.message_mb (relay.py), so a flood of output must not become one. A writer
    # that has 4 MB waiting waits for it to be sent, so a flood is not held here either.
    flush_buffers = getattr(stream_class, "_flush_buffers", None)
    schedule = getattr(stream_class, "_schedule_flush", None)
    if flush_buffers is None or schedule is None:
        return
    def in_pieces(self):
        for parent, data in flush_buffers(self):
            for start in range(0, len(data), piece):
                yield parent, data[start:start + piece]
    def flush_when_full(self):
        buffers = getattr(self, "_buffers", None) or {}
        try:
            waiting = sum(buffer.tell() for buffer in list(buffers.values()))
        except ValueError:  # a buffer the IOPub thread has just sent and closed: none waits there
            waiting = 0
        if waiting >= piece:
            self.flush()
        else:
            schedule(self)
    stream_class._flush_buffers = in_pieces
    stream_class._schedule_flush = flush_when_full
def _analyst_still():
    # The host checks from outside that nothing of a step runs after it (quiescence.py), so
    # the kernel's own machinery waits without timers, and what it starts lazily is started
    # now: the IOPub thread's periodic clean-up runs once per step instead, pyzmq's
    # garbage-collector thread is started, tqdm's monitor thread (woken every 10 s) is off,
    # and output is sent 5 ms after it is written, not 200 (the last print's timer would
    # keep the IOPub thread waiting with a timeout for that long after the step).
    import sys
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "flush_interval"):
            stream.flush_interval = 0.005
    if hasattr(sys.stdout, "flush_interval"):
        _analyst_in_pieces(type(sys.stdout))
    ip = get_ipython()
    iopub = getattr(getattr(ip, "kernel", None), "iopub_thread", None)
    task = getattr(iopub, "_event_pipe_gc_task", None)
    clean_up = getattr(iopub, "_event_pipe_gc", None)
    if task is not None and clean_up is not None:
        import asyncio
        iopub.io_loop.add_callback(task.cancel)
        ip.events.register(
            "post_execute", lambda: iopub.io_loop.add_callback(lambda: asyncio.ensure_future(clean_up())))
    try:
        from zmq.utils.garbage import gc
        gc.start()
    except Exception:
        pass
    try:
        import tqdm
        tqdm.tqdm.monitor_interval = 0
    except Exception:
        pass
try:
    _analyst_still()
except Exception:
    pass
del _analyst_still, _analyst_in_pieces
"""


REAP_CHILDREN = """\
import os as _analyst_os
try:
    while _analyst_os.waitpid(-1, _analyst_os.WNOHANG)[0]:
        pass
except ChildProcessError:
    pass
del _analyst_os
"""


#: Each matplotlib figure shown says what it is: its display's metadata carries its title (the
#: figure's suptitle, else its axes' titles: "A and B" for two charts side by side, as a name
#: after the first alone would hide the second) and the variable that holds it (the figure,
#: else its axes), so the host can name the chart's artifact after it. The kernel is the
#: model's: the host reads these as untrusted text (``kernel/figure_names.py``).
FIGURE_NAMES_CODE = """\
def _analyst_figure_names():
    try:
        from matplotlib.axes import Axes
        from matplotlib.figure import Figure
    except Exception:
        return
    ip = get_ipython()
    def label(fig):
        title = ""
        try:
            sup = getattr(fig, "_suptitle", None)
            if sup is not None and sup.get_text().strip():
                title = sup.get_text()
            else:
                titles = []
                for ax in fig.get_axes():
                    for loc in ("center", "left", "right"):
                        text = ax.get_title(loc=loc).strip()
                        if text:
                            if text not in titles:
                                titles.append(text)
                            break
                if len(titles) > 1:
                    title = ", ".join(titles[:-1]) + " and " + titles[-1]
                elif titles:
                    title = titles[0]
        except Exception:
            title = ""
        variable = ""
        held = [(0 if v is fig else 1, k) for k, v in list(ip.user_ns.items())
                if not k.startswith("_") and (v is fig or (isinstance(v, Axes) and v.figure is fig))]
        if held:
            variable = min(held)[1]
        named = {k: v[:300] for k, v in (("title", title), ("variable", variable)) if v}
        return {"jupyter_analyst": named} if named else None
    formatters = ip.display_formatter.formatters
    for mime in ("image/png", "image/svg+xml"):
        formatter = formatters.get(mime)
        try:
            printer = formatter.lookup_by_type(Figure)
        except Exception:
            continue
        def named(fig, _printer=printer):
            data = _printer(fig)
            if data is None or isinstance(data, tuple):
                return data
            try:
                metadata = label(fig)
            except Exception:
                metadata = None
            return (data, metadata) if metadata else data
        formatter.for_type(Figure, named)
try:
    _analyst_figure_names()
except Exception:
    pass
del _analyst_figure_names
"""
