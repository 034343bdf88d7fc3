# workerd config for the packaged tier (scripts/packaged/run.ts): the Worker bundled from the
# installed npm form (worker.js, written next to a copy of this file) on 127.0.0.1 with a port
# chosen by the system (reported through --control-fd). From this compatibility date on,
# nodejs_compat is the default: it provides the node: built-ins that ./coding imports.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2026-11-17",
);
