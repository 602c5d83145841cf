"""Create or update the one specgen comment on a GitHub pull request or GitLab merge request.

Usage: python sticky_comment.py BODY.md
The comment is found by a hidden marker on its first line, so every push edits it instead of adding
another. An empty BODY.md (specgen stopped before writing one) leaves the comment as it is; a workload
file that cannot be planned is explained in the body ``specgen diff`` writes, which exits non-zero then.
GitHub Actions: needs GITHUB_TOKEN, PR_NUMBER (GITHUB_REPOSITORY and GITHUB_API_URL are set by the runner).
GitLab CI: needs SPECGEN_NOTE_TOKEN (CI_API_V4_URL, CI_PROJECT_ID and CI_MERGE_REQUEST_IID are set by the runner).
Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

MARKER = "<!-- specgen-fleet-diff -->"


def call(method: str, url: str, headers: dict[str, str], payload: dict[str, Any] | None = None) -> Any:
    """One JSON request to the CI system's API."""
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={**headers, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def github(body: str) -> None:
    """Edit the pull request's marked comment, or add it."""
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com")
    repo, number = os.environ["GITHUB_REPOSITORY"], os.environ["PR_NUMBER"]
    headers = {"Authorization": f"Bearer {os.environ['GITHUB_TOKEN']}", "Accept": "application/vnd.github+json"}
    page = 1
    while True:
        comments = call("GET", f"{api}/repos/{repo}/issues/{number}/comments?per_page=100&page={page}", headers)
        for comment in comments:
            if str(comment.get("body", "")).startswith(MARKER):
                call("PATCH", f"{api}/repos/{repo}/issues/comments/{comment['id']}", headers, {"body": body})
                return
        if len(comments) < 100:
            break
        page += 1
    call("POST", f"{api}/repos/{repo}/issues/{number}/comments", headers, {"body": body})


def gitlab(body: str) -> None:
    """Edit the merge request's marked note, or add it."""
    api, project, iid = os.environ["CI_API_V4_URL"], os.environ["CI_PROJECT_ID"], os.environ["CI_MERGE_REQUEST_IID"]
    headers = {"PRIVATE-TOKEN": os.environ["SPECGEN_NOTE_TOKEN"]}
    notes_url = f"{api}/projects/{project}/merge_requests/{iid}/notes"
    page = 1
    while True:
        notes = call("GET", f"{notes_url}?per_page=100&page={page}", headers)
        for note in notes:
            if str(note.get("body", "")).startswith(MARKER):
                call("PUT", f"{notes_url}/{note['id']}", headers, {"body": body})
                return
        if len(notes) < 100:
            break
        page += 1
    call("POST", notes_url, headers, {"body": body})


def main() -> int:
    """Post BODY.md (the first argument) as the one specgen comment."""
    with open(sys.argv[1], encoding="utf-8") as fh:
        text = fh.read()
    if not text.strip():  # specgen stopped before writing (a bad --base, not installed): keep the last comment
        print(f"{sys.argv[1]} is empty (see the specgen diff step's log); the comment is left as it is")
        return 0
    body = f"{MARKER}\n{text}"
    try:
        if os.environ.get("GITHUB_ACTIONS") == "true":
            github(body)
        elif os.environ.get("GITLAB_CI") == "true":
            gitlab(body)
        else:
            print("not in GitHub Actions or GitLab CI; the comment would be:\n" + body)
    except urllib.error.HTTPError as exc:  # newuser82 item 6: a traceback, where a fork's read-only token is usual
        print(f"cannot post the comment: HTTP {exc.code} {exc.reason} from {exc.url}; {_why(exc.code)}", file=sys.stderr)
        return 1
    except (urllib.error.URLError, OSError) as exc:
        print(f"cannot post the comment: {getattr(exc, 'reason', exc)}", file=sys.stderr)
        return 1
    return 0


def _why(status: int) -> str:
    """What an HTTP error from the comment's API most often means here."""
    if status in (401, 403, 404):
        if os.environ.get("GITHUB_ACTIONS") == "true":
            return (
                "the token may not write comments: the workflow needs `permissions: pull-requests: write`, and a pull "
                "request from a fork gets a read-only GITHUB_TOKEN (https://docs.github.com/en/actions/security-for-"
                "github-actions/security-guides/automatic-token-authentication#permissions-for-the-github_token)"
            )
        return "SPECGEN_NOTE_TOKEN must be a project access token with the `api` scope, unexpired"
    return "the comment is left as it was"


if __name__ == "__main__":
    raise SystemExit(main())
