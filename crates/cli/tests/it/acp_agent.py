"""A stand-in agent that speaks the Agent Client Protocol (JSON-RPC 2.0, a JSON object per line)
on its stdio, for the `acp:` seat's tests (acp.rs). `python3 acp_agent.py MODE LOG`: MODE is how
its coder turns behave, LOG a file outside the repository it appends a JSON line to for each
thing the tests check (what epic answered it). Every other role answers as epic asks: a
planner's task list, a clean verdict.

Modes (the coder's, unless said):
  good      asks to edit its story's file (allowed once), writes it through fs/write_text_file,
            replies.
  outside   writes a file outside its perimeter through fs/write_text_file (refused), asks to
            edit .git/config (rejected), then does the good coder's work.
  sneaky    asks to edit a file outside its perimeter (rejected), writes it anyway with its own
            file I/O, replies.
  flood     sends the same tool call over and over, then waits: ended as looping.
  mute      reads and never answers, not even `initialize`: ended as stalled.
  garbage   answers `initialize` with a line that is not JSON.
  exit      exits with status 3 after `session/new`, saying why on stderr.
  nologin   answers `session/new` with `auth_required`.
  judge     (every role but the coder) asks to edit a file and to run `cargo test` (both
            rejected in a read-only turn) and `git status` (allowed), then answers.
"""

import json
import os
import sys

MODE = sys.argv[1]
LOG = sys.argv[2]
ROLE = os.environ.get("EPIC_ROLE", "")
STORY = os.environ.get("EPIC_STORY", "")
WORKTREE = os.getcwd()
NEXT_ID = [100]
CANCELLED = [False]


def log(**fields):
    fields.setdefault("role", ROLE)
    fields.setdefault("story", STORY)
    with open(LOG, "a", encoding="utf-8") as out:
        out.write(json.dumps(fields) + "\n")


def send(message):
    message["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def call(method, params):
    """Sends a request and waits for its answer; a `session/cancel` meanwhile is noted."""
    NEXT_ID[0] += 1
    ident = NEXT_ID[0]
    send({"id": ident, "method": method, "params": params})
    while True:
        message = read()
        if message.get("method") == "session/cancel":
            CANCELLED[0] = True
            continue
        if message.get("id") == ident and "method" not in message:
            return message


def update(session, body):
    send({"method": "session/update", "params": {"sessionId": session, "update": body}})


def say(session, text):
    update(session, {"sessionUpdate": "agent_message_chunk",
                     "content": {"type": "text", "text": text}})


OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    {"optionId": "never", "name": "Always reject", "kind": "reject_always"},
]


def ask(session, call_id, kind, title, path=None, command=None):
    """Asks permission for a tool call; logs and returns the option epic chose."""
    tool_call = {"toolCallId": call_id, "title": title, "kind": kind}
    if path is not None:
        tool_call["locations"] = [{"path": path}]
    if command is not None:
        tool_call["rawInput"] = {"command": command}
    answer = call("session/request_permission",
                  {"sessionId": session, "toolCall": tool_call, "options": OPTIONS})
    outcome = answer.get("result", {}).get("outcome", {})
    chosen = outcome.get("optionId", outcome.get("outcome"))
    meta = answer.get("result", {}).get("_meta") or {}
    log(event="permission", title=title, chosen=chosen,
        reason=meta.get("epic", {}).get("reason"))
    return chosen


def write(session, path, content):
    """Writes through epic; logs and returns the error message epic gave, if any."""
    answer = call("fs/write_text_file",
                  {"sessionId": session, "path": path, "content": content})
    error = answer.get("error")
    log(event="write", path=path, error=error and error.get("message"))
    return error


def good_coder(session):
    own = os.path.join(WORKTREE, STORY, STORY + ".txt")
    update(session, {"sessionUpdate": "tool_call", "toolCallId": "w1",
                     "title": "Write " + STORY + "/" + STORY + ".txt", "kind": "edit",
                     "status": "pending", "locations": [{"path": own}],
                     "rawInput": {"path": own}})
    if ask(session, "w1", "edit", "Write " + STORY + ".txt", path=own) == "yes":
        write(session, own, STORY + "\n")
    say(session, "Wrote " + STORY + "/" + STORY + ".txt.")


def prompt(session):
    """One turn's work, by role and mode; returns the stop reason."""
    if ROLE == "planner":
        say(session, json.dumps({"tasks": [{"title": "Write the file",
                                            "description": "Write the story's file."}]}))
        return "end_turn"
    if ROLE != "coder":
        if MODE == "judge":
            ask(session, "j1", "edit", "Edit the file", path=STORY + "/" + STORY + ".txt")
            ask(session, "j2", "execute", "Run the tests", command="cargo test")
            ask(session, "j3", "execute", "Look at the status", command="git status")
        say(session, json.dumps({"clean": True, "issues": []}))
        return "end_turn"
    if MODE in ("good", "judge"):
        good_coder(session)
    elif MODE == "outside":
        write(session, os.path.join(WORKTREE, "elsewhere", "x.txt"), "not mine\n")
        ask(session, "g1", "edit", "Edit .git/config", path=os.path.join(WORKTREE, ".git/config"))
        good_coder(session)
    elif MODE == "sneaky":
        if ask(session, "s1", "edit", "Write elsewhere/x.txt", path="elsewhere/x.txt") != "yes":
            os.makedirs(os.path.join(WORKTREE, "elsewhere"), exist_ok=True)
            with open(os.path.join(WORKTREE, "elsewhere", "x.txt"), "w", encoding="utf-8") as out:
                out.write("written anyway\n")
        good_coder(session)
    elif MODE == "flood":
        for _ in range(200):
            update(session, {"sessionUpdate": "tool_call", "toolCallId": "f",
                             "title": "Read the same file", "kind": "read",
                             "rawInput": {"path": "README.md"}})
        while True:
            message = read()
            if message.get("method") == "session/cancel":
                log(event="cancelled")
                return "cancelled"
    return "end_turn"


def main():
    log(event="started", mode=MODE)
    session = None
    while True:
        message = read()
        method = message.get("method")
        ident = message.get("id")
        if MODE == "mute":
            continue
        if method == "initialize":
            if MODE == "garbage":
                sys.stdout.write("this is not json {\n")
                sys.stdout.flush()
                continue
            send({"id": ident, "result": {"protocolVersion": 1, "agentCapabilities": {},
                                          "authMethods": [{"id": "stand-in-login",
                                                           "name": "Log in"}]}})
        elif method == "session/new":
            if MODE == "exit" and ROLE == "coder":
                sys.stderr.write("the stand-in gives up: no model configured\n")
                sys.exit(3)
            if MODE == "nologin" and ROLE == "coder":
                send({"id": ident, "error": {"code": -32000, "message": "Authentication required"}})
                continue
            session = "s-" + STORY
            send({"id": ident, "result": {"sessionId": session}})
        elif method == "session/prompt":
            text = "".join(block.get("text", "") for block in message["params"]["prompt"])
            log(event="prompted", told_rejections="[epic rejected these requests" in text)
            stop = prompt(session)
            send({"id": ident, "result": {"stopReason": stop,
                                          "usage": {"totalTokens": 150, "inputTokens": 100,
                                                    "outputTokens": 50}}})
        elif method == "session/cancel":
            log(event="cancelled")
        elif ident is not None:
            send({"id": ident, "error": {"code": -32601, "message": "unknown " + str(method)}})


main()
