#!/usr/bin/env python3
"""A fake Kubernetes API server for the node controller's tests.

It speaks the real protocol for the part sluice-agent uses, over HTTPS with a
test CA and server certificate that openssl makes at start:
  GET   /api/v1/nodes[?limit=N[&continue=C]]
                                           NodeList with metadata.resourceVersion, in
                                           pages of N by name when limit is set, as
                                           the API server pages: every page of one
                                           list is of the first page's version, the
                                           next page's token in metadata.continue; a
                                           token whose version was compacted since:
                                           410 Gone (reason Expired)
  GET   /api/v1/nodes?watch=1&resourceVersion=R&timeoutSeconds=T[&allowWatchBookmarks=true]
        200 with Transfer-Encoding: chunked, one JSON event a line (ADDED,
        MODIFIED, DELETED, BOOKMARK), the events after R first; closed after T
        seconds with a BOOKMARK; R older than the oldest kept version: 410 Gone
        (as the HTTP status, or as an ERROR event with code 410)
  GET   /api/v1/nodes/NAME[/status]        the Node or 404
  PATCH /api/v1/nodes/NAME[/status]        application/merge-patch+json (RFC 7386) or
                                           application/strategic-merge-patch+json
                                           (maps merge as in a merge patch; enough
                                           for metadata.annotations); as the API
                                           server's Node strategies do, a patch of
                                           the Node keeps its status and a patch of
                                           the status subresource keeps its spec
                                           (metadata is patchable through both)
Every request needs "Authorization: Bearer TOKEN" (401 otherwise) and is
authorised as RBAC would: the token holds the rules the chart's ClusterRole
grants (get, list, watch on nodes; patch on nodes/status), anything else is
403 Forbidden with the API server's message.

Control interface for the tests: plain HTTP on 127.0.0.1, POST /control with
one JSON command, GET /control/node/NAME (the stored object), GET
/control/stats (request counts). Commands:
  {"op": "put", "name": N, "pod_cidrs": [...], "internal_ip": A (or "internal_ips": [A, ...]), "ready": true,
   "ready_since": "RFC3339", "annotations": {...}}   ADDED or MODIFIED
  {"op": "delete", "name": N}                        DELETED
  {"op": "put_many", "nodes": [{...}, ...]}          one "put" per element (without
        "op"), stored and written to open watches together: a burst of events
  {"op": "expire", "as_event": false}                every version so far is compacted
        and open watches end (with an ERROR 410 event if as_event)
  {"op": "raw", "line": "..."}                       a line as-is to open watches
  {"op": "bookmark"}                                 a BOOKMARK to open watches
  {"op": "stop"} / {"op": "start"}                   the API port goes away / back
  {"op": "rbac", "rules": [{"resources": [...], "verbs": [...]}, ...]}
        the token's rules from now on
  {"op": "compact_after_pages", "pages": N}          after N more list pages, every
        version so far is compacted (as "expire" without ending watches): a
        continue token of the list in progress then gets 410 Gone
  {"op": "fail_list_pages", "after": N, "status": S} the list pages after the next N
        are answered status S (500: an internal error) until the next
        "fail_list_pages"; {"after": -1} ends it
GET /control/emitted?since=RV: for every event after version RV, when a watch
first wrote it to its stream ({"events": [[rv, name, t], ...]}, t in
time.monotonic() seconds, which is CLOCK_MONOTONIC on Linux, so a benchmark
in another process can compare it with its own clock).
Writes DIR/ca.crt, DIR/kubeconfig and DIR/ports.json ({"api": P, "control": C}).
"""
import argparse
import base64
import http.server
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid


# What the chart's ClusterRole grants the agent (helm/sluice/templates/rbac.yaml).
CHART_RULES = [{"resources": ["nodes"], "verbs": ["get", "list", "watch"]},
               {"resources": ["nodes/status"], "verbs": ["patch"]}]


def now_rfc3339():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def make_certs(d):
    """A CA and a server certificate for 127.0.0.1/localhost, signed by it."""
    def run(*args):
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=fake-kube-ca",
        "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.crt")
    with open(f"{d}/san.ext", "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=fake-kube-apiserver",
        "-keyout", f"{d}/server.key", "-out", f"{d}/server.csr")
    run("openssl", "x509", "-req", "-in", f"{d}/server.csr", "-CA", f"{d}/ca.crt", "-CAkey", f"{d}/ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", f"{d}/san.ext", "-out", f"{d}/server.crt")


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


class Store:
    def __init__(self):
        self.lock = threading.Condition()
        self.rv = 100
        self.nodes = {}
        self.events = []        # (rv, type, object), everything since start
        self.oldest_ok = 0      # a watch from a version below this: 410
        self.generation = 0     # bumped by expire (ends open watches)
        self.as_event = False
        self.raw = []           # (index, line) for open watches
        self.emitted = {}       # rv -> (name, monotonic time it was first written to a watch)
        self.stats = {"list": 0, "list_pages": 0, "list_limits": [], "watch": 0, "get": 0, "patch": 0,
                      "patch_status": 0, "gone": 0, "unauthorized": 0, "forbidden": 0}
        self.rules = [dict(r) for r in CHART_RULES]
        self.snapshots = {}     # rv -> the Nodes at that version, sorted by name (lists in pages)
        self.compact_after = None  # list pages until every version so far is compacted
        self.fail_after = None  # list pages until they fail with fail_status
        self.fail_status = 500

    def compact(self):
        """As etcd's compaction after other writes: the revision moves on (etcd's
        is cluster-wide, a Lease renewal moves it too) and every version before
        the current one is gone: watches and continue tokens from them get 410."""
        self.rv += 1
        self.oldest_ok = self.rv
        self.snapshots.clear()

    def allowed(self, verb, resource):
        return any(resource in r.get("resources", []) and verb in r.get("verbs", []) for r in self.rules)

    def nodes_at(self, rv):
        """The Nodes as they were at version rv, sorted by name (replayed from the events)."""
        if rv == self.rv:
            return [(n, self.nodes[n]) for n in sorted(self.nodes)]
        if rv not in self.snapshots:
            if len(self.snapshots) >= 16:
                self.snapshots.clear()  # a few lists in progress at a time
            nodes = {}
            for erv, kind, obj in self.events:
                if erv > rv:
                    break
                if kind == "DELETED":
                    nodes.pop(obj["metadata"]["name"], None)
                else:
                    nodes[obj["metadata"]["name"]] = obj
            self.snapshots[rv] = [(n, nodes[n]) for n in sorted(nodes)]
        return self.snapshots[rv]

    def record(self, kind, obj):
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.events.append((self.rv, kind, json.loads(json.dumps(obj))))
        self.lock.notify_all()

    def node_object(self, cmd, old):
        name = cmd["name"]
        obj = old or {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": str(uuid.uuid4()), "creationTimestamp": now_rfc3339(),
                         "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
                         "annotations": {}},
            "spec": {},
            "status": {"addresses": [], "conditions": []},
        }
        obj = json.loads(json.dumps(obj))
        if "pod_cidrs" in cmd:
            obj["spec"]["podCIDRs"] = list(cmd["pod_cidrs"])
            if cmd["pod_cidrs"]:
                obj["spec"]["podCIDR"] = cmd["pod_cidrs"][0]
            else:
                obj["spec"].pop("podCIDR", None)
        if "internal_ip" in cmd or "internal_ips" in cmd:
            ips = cmd["internal_ips"] if "internal_ips" in cmd else [cmd["internal_ip"]]
            obj["status"]["addresses"] = ([{"type": "InternalIP", "address": ip} for ip in ips] +
                                          [{"type": "Hostname", "address": name}])
        if "ready" in cmd or not obj["status"]["conditions"]:
            ready = cmd.get("ready", True)
            since = cmd.get("ready_since", now_rfc3339())
            obj["status"]["conditions"] = [{
                "type": "Ready", "status": "True" if ready else "False",
                "lastHeartbeatTime": now_rfc3339(), "lastTransitionTime": since,
                "reason": "KubeletReady" if ready else "KubeletNotReady",
                "message": "kubelet is posting ready status" if ready else "container runtime is down"}]
        if "annotations" in cmd:
            obj["metadata"]["annotations"] = dict(cmd["annotations"])
        return obj


STORE = Store()
TOKEN = ""
# The service account the token is (for the API server's messages).
USER = "system:serviceaccount:sluice-system:sluice-agent"


def encode_continue(rv, start):
    """As the API server's storage layer writes a continue token."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_continue(token):
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        c = json.loads(raw)
        if c.get("v") != "meta.k8s.io/v1" or not isinstance(c.get("rv"), int) or not isinstance(c.get("start"), str):
            return None
        return c
    except ValueError:
        return None


def status_object(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


class JsonHandler(http.server.BaseHTTPRequestHandler):
    """Replies with one JSON body (the API's and the control port's alike)."""

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class ApiHandler(JsonHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-kube-apiserver"

    def log_message(self, fmt, *args):
        sys.stderr.write("fake-apiserver: " + (fmt % args) + "\n")

    def authorized(self):
        if self.headers.get("Authorization", "") == "Bearer " + TOKEN:
            return True
        with STORE.lock:
            STORE.stats["unauthorized"] += 1
        self.send_json(401, status_object(401, "Unauthorized", "Unauthorized"))
        return False

    def permitted(self, verb, resource, name=None):
        """RBAC: the token's rules allow `verb` on `resource`, else 403 as the API server words it."""
        with STORE.lock:
            if STORE.allowed(verb, resource):
                return True
            STORE.stats["forbidden"] += 1
        what = f'{resource.split("/")[0]} "{name}"' if name else resource.split("/")[0]
        self.send_json(403, status_object(
            403, "Forbidden", f'{what} is forbidden: User "{USER}" cannot {verb} resource "{resource}" '
            'in API group "" at the cluster scope'))
        return False

    def node_path(self, path):
        """/api/v1/nodes/NAME or /api/v1/nodes/NAME/status: (name, resource), else None."""
        if not path.startswith("/api/v1/nodes/"):
            return None
        parts = path[len("/api/v1/nodes/"):].split("/")
        if len(parts) == 1 and parts[0]:
            return parts[0], "nodes"
        if len(parts) == 2 and parts[0] and parts[1] == "status":
            return parts[0], "nodes/status"
        return None

    def do_GET(self):
        self.server.track(self.connection)
        if not self.authorized():
            return
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/api/v1/nodes":
            if q.get("watch") in ("1", "true"):
                if not self.permitted("watch", "nodes"):
                    return
                return self.watch(q)
            if not self.permitted("list", "nodes"):
                return
            return self.list(q)
        target = self.node_path(url.path)
        if target is not None:
            name, resource = target
            if not self.permitted("get", resource, name):
                return
            with STORE.lock:
                STORE.stats["get"] += 1
                node = STORE.nodes.get(name)
            if node is None:
                return self.send_json(404, status_object(404, "NotFound", f'nodes "{name}" not found'))
            return self.send_json(200, node)
        self.send_json(404, status_object(404, "NotFound", "the server could not find the requested resource"))

    def list(self, q):
        try:
            limit = int(q.get("limit", "0") or "0")
        except ValueError:
            return self.send_json(400, status_object(400, "BadRequest", "limit is not an integer"))
        token = q.get("continue", "")
        with STORE.lock:
            STORE.stats["list_pages"] += 1
            STORE.stats["list_limits"].append(limit)
            if not token:
                STORE.stats["list"] += 1
            if STORE.fail_after is not None:
                if STORE.fail_after == 0:
                    return self.send_json(STORE.fail_status, status_object(
                        STORE.fail_status, "InternalError", "Internal error occurred: injected by the test"))
                STORE.fail_after -= 1
            if token:
                if q.get("resourceVersion"):
                    return self.send_json(400, status_object(
                        400, "BadRequest", "specifying resource version is not allowed when using continue"))
                c = decode_continue(token)
                if c is None:
                    return self.send_json(400, status_object(400, "BadRequest", "continue key is not valid"))
                rv, start = c["rv"], c["start"]
                if rv < STORE.oldest_ok:
                    # As etcd answers once it compacted the list's revision:
                    # the list cannot go on at its version.
                    STORE.stats["gone"] += 1
                    body = status_object(
                        410, "Expired", "The provided continue parameter is too old to display a consistent list "
                        "result. You can start a new list without the continue parameter, or use the continue token "
                        "in this response to retrieve the remainder of the results. Continuing with the provided "
                        "token results in an inconsistent list - objects that were created, modified, or deleted "
                        "between the time the first chunk was returned and now may show up in the list.")
                    body["metadata"] = {"continue": encode_continue(STORE.rv, start)}
                    return self.send_json(410, body)
            else:
                rv, start = STORE.rv, ""
            nodes = [obj for name, obj in STORE.nodes_at(rv) if name >= start]
            page = nodes[:limit] if limit > 0 else nodes
            meta = {"resourceVersion": str(rv)}
            if len(page) < len(nodes):
                # The next key after the page's last, as the storage layer starts it.
                meta["continue"] = encode_continue(rv, page[-1]["metadata"]["name"] + "\x00")
                meta["remainingItemCount"] = len(nodes) - len(page)
            body = {"kind": "NodeList", "apiVersion": "v1", "metadata": meta,
                    "items": [json.loads(json.dumps(n)) for n in page]}
            if STORE.compact_after is not None:
                STORE.compact_after -= 1
                if STORE.compact_after <= 0:
                    STORE.compact_after = None
                    STORE.compact()
        return self.send_json(200, body)

    def do_PATCH(self):
        self.server.track(self.connection)
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if not self.authorized():
            return
        url = urllib.parse.urlsplit(self.path)
        ctype = self.headers.get("Content-Type", "")
        target = self.node_path(url.path)
        if target is None:
            return self.send_json(404, status_object(404, "NotFound", "not found"))
        name, resource = target
        if not self.permitted("patch", resource, name):
            return
        if ctype not in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
            return self.send_json(415, status_object(415, "UnsupportedMediaType", f"unsupported patch type {ctype}"))
        try:
            patch = json.loads(raw)
        except ValueError:
            return self.send_json(400, status_object(400, "BadRequest", "patch is not JSON"))
        with STORE.lock:
            STORE.stats["patch_status" if resource == "nodes/status" else "patch"] += 1
            node = STORE.nodes.get(name)
            if node is None:
                return self.send_json(404, status_object(404, "NotFound", f'nodes "{name}" not found'))
            # What a patch may not change.
            patch.get("metadata", {}).pop("name", None)
            patch.get("metadata", {}).pop("resourceVersion", None)
            patched = merge_patch(node, patch)
            # The API server's Node strategies: the status subresource keeps
            # the spec, the Node itself keeps the status.
            kept = "spec" if resource == "nodes/status" else "status"
            if kept in node:
                patched[kept] = node[kept]
            else:
                patched.pop(kept, None)
            STORE.nodes[name] = patched
            STORE.record("MODIFIED", patched)
            out = json.loads(json.dumps(patched))
        self.send_json(200, out)

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def event(self, kind, obj):
        self.chunk(json.dumps({"type": kind, "object": obj}).encode() + b"\n")

    def watch(self, q):
        timeout = float(q.get("timeoutSeconds", "1800"))
        since = int(q.get("resourceVersion", "0") or "0")
        with STORE.lock:
            STORE.stats["watch"] += 1
            gone = since != 0 and since < STORE.oldest_ok
            if gone:
                STORE.stats["gone"] += 1
            as_event = STORE.as_event
            generation = STORE.generation
            raw_seen = len(STORE.raw)
        if gone and not as_event:
            return self.send_json(410, status_object(
                410, "Expired", f"too old resource version: {since} ({STORE.oldest_ok})"))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        if gone:
            self.event("ERROR", status_object(410, "Expired", f"too old resource version: {since}"))
            self.chunk(b"")
            return
        deadline = time.monotonic() + timeout
        sent = since
        # Events are appended in version order: an index into them, so that a
        # wake does not scan every event since start (thousands of Nodes).
        with STORE.lock:
            next_index = 0
            while next_index < len(STORE.events) and STORE.events[next_index][0] <= sent:
                next_index += 1
        bookmarks = q.get("allowWatchBookmarks") == "true"
        while True:
            with STORE.lock:
                pending = STORE.events[next_index:]
                next_index = len(STORE.events)
                raws = STORE.raw[raw_seen:]
                raw_seen = len(STORE.raw)
                expired = STORE.generation != generation
                want_bookmark = [r for r in raws if r is None]
                if not pending and not raws and not expired:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    STORE.lock.wait(min(left, 0.5))
                    continue
                rv_now = STORE.rv
            if expired:
                if STORE.as_event:
                    self.event("ERROR", status_object(410, "Expired", "too old resource version"))
                self.chunk(b"")
                return
            for rv, kind, obj in pending:
                self.event(kind, obj)
                sent = rv
                written = time.monotonic()
                with STORE.lock:
                    STORE.emitted.setdefault(rv, (obj["metadata"]["name"], written))
            for r in raws:
                if r is None:
                    if bookmarks:
                        self.event("BOOKMARK", {"kind": "Node", "apiVersion": "v1",
                                                "metadata": {"resourceVersion": str(rv_now)}})
                else:
                    self.chunk(r.encode() + b"\n")
            del want_bookmark
        if bookmarks:
            with STORE.lock:
                rv_now = STORE.rv
            self.event("BOOKMARK", {"kind": "Node", "apiVersion": "v1", "metadata": {"resourceVersion": str(rv_now)}})
        self.chunk(b"")


class ApiServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, tls):
        super().__init__(addr, ApiHandler)
        self.socket = tls.wrap_socket(self.socket, server_side=True)
        self.conns = set()
        self.conns_lock = threading.Lock()

    def track(self, conn):
        with self.conns_lock:
            self.conns.add(conn)

    def handle_error(self, request, client_address):
        pass  # a client gone mid-stream, or stopped on purpose

    def kill_connections(self):
        with self.conns_lock:
            for c in self.conns:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.conns.clear()


class Api:
    """The API port, which the tests stop and start again."""

    def __init__(self, port, tls):
        self.port, self.tls, self.server, self.thread = port, tls, None, None

    def start(self):
        if self.server is not None:
            return
        self.server = ApiServer(("127.0.0.1", self.port), self.tls)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        if self.server is None:
            return
        self.server.shutdown()
        self.server.server_close()
        self.server.kill_connections()
        with STORE.lock:
            STORE.lock.notify_all()
        self.server = None


API = None


class ControlHandler(JsonHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        if self.path.startswith("/control/node/"):
            with STORE.lock:
                node = STORE.nodes.get(self.path[len("/control/node/"):])
            return self.send_json(200 if node else 404, node or {})
        if self.path.startswith("/control/emitted"):
            q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
            since = int(q.get("since", "0"))
            with STORE.lock:
                events = [[rv, name, t] for rv, (name, t) in sorted(STORE.emitted.items()) if rv > since]
            return self.send_json(200, {"events": events})
        if self.path == "/control/stats":
            with STORE.lock:
                return self.send_json(200, dict(STORE.stats, rv=STORE.rv))
        self.send_json(404, {})

    def do_POST(self):
        cmd = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        op = cmd.get("op")
        if op == "stop":
            API.stop()
            return self.send_json(200, {})
        if op == "start":
            API.start()
            return self.send_json(200, {})
        with STORE.lock:
            if op == "put":
                old = STORE.nodes.get(cmd["name"])
                node = STORE.node_object(cmd, old)
                STORE.nodes[cmd["name"]] = node
                STORE.record("MODIFIED" if old else "ADDED", node)
            elif op == "put_many":
                for one in cmd["nodes"]:
                    old = STORE.nodes.get(one["name"])
                    node = STORE.node_object(one, old)
                    STORE.nodes[one["name"]] = node
                    STORE.record("MODIFIED" if old else "ADDED", node)
            elif op == "delete":
                node = STORE.nodes.pop(cmd["name"], None)
                if node is not None:
                    STORE.record("DELETED", node)
            elif op == "expire":
                STORE.compact()
                STORE.as_event = bool(cmd.get("as_event", False))
                STORE.generation += 1
                STORE.lock.notify_all()
            elif op == "raw":
                STORE.raw.append(cmd["line"])
                STORE.lock.notify_all()
            elif op == "rbac":
                STORE.rules = [dict(r) for r in cmd["rules"]]
            elif op == "compact_after_pages":
                STORE.compact_after = int(cmd["pages"])
            elif op == "fail_list_pages":
                after = int(cmd["after"])
                STORE.fail_after = None if after < 0 else after
                STORE.fail_status = int(cmd.get("status", 500))
            elif op == "bookmark":
                STORE.raw.append(None)
                STORE.lock.notify_all()
            else:
                return self.send_json(400, {"error": f"unknown op {op}"})
            rv = STORE.rv
        self.send_json(200, {"rv": rv})


def main():
    global TOKEN, API
    p = argparse.ArgumentParser()
    p.add_argument("--dir")
    p.add_argument("--token")
    p.add_argument("--sample-node", action="store_true",
                   help="print one Node object as the server makes them (for schema validation) and exit")
    a = p.parse_args()
    if a.sample_node:
        node = STORE.node_object({"name": "worker-1", "pod_cidrs": ["10.244.1.0/24", "fd00:1::/64"],
                                  "internal_ip": "192.0.2.11", "ready": False,
                                  "annotations": {"sluice.dev/vtep": '{"version":1,"vtep":"192.0.2.11",'
                                                  '"mac":"02:00:00:00:00:11","vni":42}'}}, None)
        node["metadata"]["resourceVersion"] = "101"
        print(json.dumps(node, indent=1))
        return
    if not a.dir or not a.token:
        p.error("--dir and --token are required")
    TOKEN = a.token
    os.makedirs(a.dir, exist_ok=True)
    make_certs(a.dir)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(f"{a.dir}/server.crt", f"{a.dir}/server.key")
    API = Api(0, tls)
    API.start()
    control = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ControlHandler)
    control.daemon_threads = True
    with open(f"{a.dir}/kubeconfig", "w") as f:
        f.write(f"""apiVersion: v1
kind: Config
current-context: fake
clusters:
- name: fake
  cluster:
    server: https://127.0.0.1:{API.port}
    certificate-authority: ca.crt
users:
- name: agent
  user:
    tokenFile: token
contexts:
- name: fake
  context:
    cluster: fake
    user: agent
""")
    with open(f"{a.dir}/token", "w") as f:
        f.write(a.token + "\n")
    with open(f"{a.dir}/ports.json.tmp", "w") as f:
        json.dump({"api": API.port, "control": control.server_address[1]}, f)
    os.rename(f"{a.dir}/ports.json.tmp", f"{a.dir}/ports.json")
    control.serve_forever()


if __name__ == "__main__":
    main()
