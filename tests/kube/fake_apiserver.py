#!/usr/bin/env python3
"""A fake Kubernetes API server for the node controller's tests.

It speaks the real protocol for the part sluice-agent uses, over HTTPS with a
test CA and server certificate that openssl makes at start:
  GET   /api/v1/nodes                      NodeList with metadata.resourceVersion
  GET   /api/v1/nodes?watch=1&resourceVersion=R&timeoutSeconds=T[&allowWatchBookmarks=true]
        200 with Transfer-Encoding: chunked, one JSON event a line (ADDED,
        MODIFIED, DELETED, BOOKMARK), the events after R first; closed after T
        seconds with a BOOKMARK; R older than the oldest kept version: 410 Gone
        (as the HTTP status, or as an ERROR event with code 410)
  GET   /api/v1/nodes/NAME                 the Node or 404
  PATCH /api/v1/nodes/NAME                 application/merge-patch+json (RFC 7386) or
                                           application/strategic-merge-patch+json
                                           (maps merge as in a merge patch; enough
                                           for metadata.annotations)
Every request needs "Authorization: Bearer TOKEN" (401 otherwise).

Control interface for the tests: plain HTTP on 127.0.0.1, POST /control with
one JSON command, GET /control/node/NAME (the stored object), GET
/control/stats (request counts). Commands:
  {"op": "put", "name": N, "pod_cidrs": [...], "internal_ip": A, "ready": true,
   "ready_since": "RFC3339", "annotations": {...}}   ADDED or MODIFIED
  {"op": "delete", "name": N}                        DELETED
  {"op": "put_many", "nodes": [{...}, ...]}          one "put" per element (without
        "op"), stored and written to open watches together: a burst of events
  {"op": "expire", "as_event": false}                every version so far expires
        and open watches end (with an ERROR 410 event if as_event)
  {"op": "raw", "line": "..."}                       a line as-is to open watches
  {"op": "bookmark"}                                 a BOOKMARK to open watches
  {"op": "stop"} / {"op": "start"}                   the API port goes away / back
GET /control/emitted?since=RV: for every event after version RV, when a watch
first wrote it to its stream ({"events": [[rv, name, t], ...]}, t in
time.monotonic() seconds, which is CLOCK_MONOTONIC on Linux, so a benchmark
in another process can compare it with its own clock).
Writes DIR/ca.crt, DIR/kubeconfig and DIR/ports.json ({"api": P, "control": C}).
"""
import argparse
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
        self.stats = {"list": 0, "watch": 0, "get": 0, "patch": 0, "gone": 0, "unauthorized": 0}

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
        if "internal_ip" in cmd:
            obj["status"]["addresses"] = [{"type": "InternalIP", "address": cmd["internal_ip"]},
                                          {"type": "Hostname", "address": name}]
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

    def do_GET(self):
        self.server.track(self.connection)
        if not self.authorized():
            return
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/api/v1/nodes":
            if q.get("watch") in ("1", "true"):
                return self.watch(q)
            with STORE.lock:
                STORE.stats["list"] += 1
                items = [json.loads(json.dumps(n)) for _, n in sorted(STORE.nodes.items())]
                body = {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": str(STORE.rv)},
                        "items": items}
            return self.send_json(200, body)
        if url.path.startswith("/api/v1/nodes/"):
            name = url.path[len("/api/v1/nodes/"):]
            with STORE.lock:
                STORE.stats["get"] += 1
                node = STORE.nodes.get(name)
            if node is None:
                return self.send_json(404, status_object(404, "NotFound", f'nodes "{name}" not found'))
            return self.send_json(200, node)
        self.send_json(404, status_object(404, "NotFound", "the server could not find the requested resource"))

    def do_PATCH(self):
        self.server.track(self.connection)
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if not self.authorized():
            return
        url = urllib.parse.urlsplit(self.path)
        ctype = self.headers.get("Content-Type", "")
        if ctype not in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
            return self.send_json(415, status_object(415, "UnsupportedMediaType", f"unsupported patch type {ctype}"))
        if not url.path.startswith("/api/v1/nodes/"):
            return self.send_json(404, status_object(404, "NotFound", "not found"))
        name = url.path[len("/api/v1/nodes/"):]
        try:
            patch = json.loads(raw)
        except ValueError:
            return self.send_json(400, status_object(400, "BadRequest", "patch is not JSON"))
        with STORE.lock:
            STORE.stats["patch"] += 1
            node = STORE.nodes.get(name)
            if node is None:
                return self.send_json(404, status_object(404, "NotFound", f'nodes "{name}" not found'))
            # What a patch may not change.
            patch.get("metadata", {}).pop("name", None)
            patch.get("metadata", {}).pop("resourceVersion", None)
            node = merge_patch(node, patch)
            STORE.nodes[name] = node
            STORE.record("MODIFIED", node)
            out = json.loads(json.dumps(node))
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
                STORE.oldest_ok = STORE.rv + 1
                STORE.as_event = bool(cmd.get("as_event", False))
                STORE.generation += 1
                STORE.lock.notify_all()
            elif op == "raw":
                STORE.raw.append(cmd["line"])
                STORE.lock.notify_all()
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
