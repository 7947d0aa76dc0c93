"""mieb_eval.export: a model's MIEB embeddings and ground truth exported for mieb-eval, and
replayed in mteb (tools/mieb-export, tools/mieb-eval-model, mieb_eval.evaluate).

    from mieb_eval.export import export, ReplayEncoder
    export(model, tasks, "out/task-data", "out/embeddings")     # model: an mteb encoder
    mteb.evaluate(ReplayEncoder("out/embeddings"), tasks)       # mteb scores the same vectors

The data contract is docs/FORMAT.md; see README.md "Exporting from mteb".
"""

from .check import EncodeRefused
from .export import REGISTRY_NAME, export
from .identity import ExportBusy, ExportRefused, ModelMismatch

__all__ = ["REGISTRY_NAME", "EncodeRefused", "ExportBusy", "ExportRefused", "ModelMismatch", "ReplayEncoder", "export"]


def __getattr__(name: str):  # the replay model imports mteb's model classes: load it on first use
    if name == "ReplayEncoder":
        from .replay import ReplayEncoder

        return ReplayEncoder
    raise AttributeError(name)
