"""The `semrel` command: a thin click layer over the library."""

from .agree import agree_command
from .base import main
from .calibrate import calibrate_command
from .compare import compare_command, lift_command
from .corpus import corpus_group
from .doctor import doctor_command
from .estimate import estimate_command
from .evaluate import eval_command
from .golden import golden_group
from .judge import judge_command, label_command
from .pick import pick_command
from .pool import pool_command
from .report import report_command
from .retrieve import retrieve_command
from .review import review_group
from .review_web import serve_command
from .run import init_command, run_command
from .sensitivity import sensitivity_command

golden_group.add_command(pick_command)
review_group.add_command(serve_command)
for command in (
    corpus_group, golden_group, retrieve_command, pool_command, judge_command, label_command, eval_command,
    compare_command, lift_command, sensitivity_command, report_command, review_group, calibrate_command,
    agree_command, estimate_command, doctor_command, run_command, init_command,
):
    main.add_command(command)
# Every option reads SEMREL_<COMMAND>_<OPTION> (base.main); --help names it for the per-machine ones.
for command, names in ((judge_command, ("model", "cache_dir")), (retrieve_command, ("model",))):
    for param in command.params:
        if param.name in names:
            param.show_envvar = True

__all__ = ["main"]
