"""Jobs: following and cancelling queued work (a solve's or a pack's)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint

from application import jobs

from .common import context
from .declare import Reply, operation
from .shapes import Job

bp = Blueprint("jobs", __name__)


@operation(bp, "get /v1/jobs/<job_id>", "getJob", tag="jobs", errors=(404, 503),
           summary="A queued job's state, progress and, once done, its result",
           replies={200: Reply("The job", Job)})
def job(job_id: str) -> Any:
    return jobs.view(jobs.get(context(), job_id))


@operation(bp, "delete /v1/jobs/<job_id>", "cancelJob", tag="jobs", errors=(403, 404, 503),
           summary="Cancel a pending or running job you asked for; its workers stop within about a second (a pack "
                   "keeps the puzzles made so far).  A settled job answers as it stands; a job other clients asked "
                   "for too (identical solves share one) runs on until none of them wants it.  Another client's job "
                   "is 403.",
           replies={200: Reply("The job as it stands (state cancelled, unless it had settled before or another "
                               "client that asked for it still wants it)", Job)})
def cancel_job(job_id: str) -> Any:
    return jobs.view(jobs.cancel(context(), job_id))
