"""matplotlib, imported only by the commands that draw, without a display."""

from .errors import ReportError


def pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ReportError("drawing needs matplotlib, which %s lacks; on Debian: "
                          "apt-get install python3-matplotlib" % _python())
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


# What matplotlib can write, chosen by the output file's extension.
PICTURE_FORMATS = (".png", ".svg", ".pdf")


def save(fig, out_path, **options):
    import matplotlib.pyplot as plt
    try:
        fig.savefig(out_path, dpi=110, **options)
    except (OSError, ValueError) as e:
        raise ReportError("cannot write %s: %s" % (out_path, e))
    finally:
        plt.close(fig)


def _python():
    import sys
    return sys.executable or "this python3"

