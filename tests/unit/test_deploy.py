"""deploy/: what can be checked without Docker or a cluster.

Compose, manifests and provisioning parse and agree with each other; only real configuration
keys are used; probes and health checks target the gRPC port; every metric the dashboard and
the alerts query is one `service.ops.metrics.Metrics` exports. promtool's checks of the same
files are in tests/integration/test_deploy_promtool.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from fiftyk_referee.domain.game import Observation
from fiftyk_referee.service.cli.main import build_parser
from fiftyk_referee.service.ops.config import Config, ConfigError, parse_database_url
from fiftyk_referee.service.ops.config_keys import (
    CONFIG_ENV_VARS,
    METRICS_PORT,
    PORT,
    SECRET_ENV_VARS,
)
from fiftyk_referee.service.ops.metrics import Metrics, RpcLabels

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S = DEPLOY / "k8s"
PROMETHEUS = DEPLOY / "prometheus"
GRAFANA = DEPLOY / "grafana"
REFEREES = ("referee-1", "referee-2")
MIN_CLIENT_DEADLINE_SECONDS = 5  # docs/integrating.md: "at least 5 s"
# Series Prometheus makes itself rather than scraping them from the referee.
PROMETHEUS_SERIES = frozenset({"up"})
PROMQL_WORDS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right",
                          "bool", "and", "or", "unless", "offset", "inf", "nan"})


def yaml_documents(path: Path) -> list[Any]:
    """Every YAML document in a file."""
    with path.open(encoding="utf-8") as handle:
        return [document for document in yaml.safe_load_all(handle) if document is not None]


def compose() -> dict[str, Any]:
    [document] = yaml_documents(DEPLOY / "docker-compose.yml")
    assert isinstance(document, dict)
    return document


def manifests() -> dict[str, dict[str, Any]]:
    """The Kubernetes objects of deploy/k8s by kind (one of each kind but Service)."""
    objects: dict[str, dict[str, Any]] = {}
    for path in sorted(K8S.glob("*.yaml")):
        for document in yaml_documents(path):
            key = document["kind"]
            if key == "Service":
                key = f"Service/{document['metadata']['name']}"
            assert key not in objects, f"two {key} objects"
            objects[key] = document
    return objects


def referee_container() -> dict[str, Any]:
    [container] = manifests()["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert isinstance(container, dict)
    return container


def container_port(name: str) -> int:
    [port] = [p["containerPort"] for p in referee_container()["ports"] if p["name"] == name]
    return int(port)


def metric_names(expr: str) -> set[str]:
    """The series names a PromQL expression selects (functions, keywords, labels removed)."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", " ", expr)
    expr = re.sub(r"\[[^\]]*\]", " ", expr)
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    names = set()
    for match in re.finditer(r"(?<![\w.$])[A-Za-z_:][A-Za-z0-9_:]*", expr):
        if expr[match.end():].lstrip().startswith("(") or match.group() in PROMQL_WORDS:
            continue
        names.add(match.group())
    return names


def exported_series() -> set[str]:
    """Every sample name in the exposition after one observation of each metric."""
    metrics = Metrics()
    rpc = RpcLabels("unary", "fiftyk.referee.v1.RefereeService", "Play")
    metrics.grpc_started(rpc)
    metrics.grpc_received(rpc)
    metrics.grpc_sent(rpc)
    metrics.grpc_handled(rpc, grpc.StatusCode.OK, 0.01)
    metrics.command("play", "accepted")
    metrics.hand_started("fiftyk", "classic")
    metrics.hand_completed("fiftyk", "classic")
    metrics.observe("fiftyk", "classic", Observation("tricks"))
    metrics.observe("fiftyk", "classic", Observation("bombs", "bomb_4"))
    metrics.observe_append(0.001)
    metrics.conflict()
    metrics.retry()
    metrics.idempotent_replay()
    metrics.observe_rebuild(0.01)
    metrics.count_active_tables_with(lambda: 1)
    metrics.watch_opened()
    metrics.webhook_delivered("e", 0.01)
    metrics.webhook_failed("e")
    metrics.webhook_retried("e")
    metrics.webhook_dead_lettered("e")
    metrics.webhook_process_restarted()
    metrics.set_webhook_lag("e", 1, 0.5)
    text = metrics.render().decode()
    return {re.split(r"[{ ]", line, maxsplit=1)[0]
            for line in text.splitlines() if line and not line.startswith("#")}


def alert_expressions() -> list[str]:
    [rules] = yaml_documents(PROMETHEUS / "alerts.yml")
    return [rule["expr"] for group in rules["groups"] for rule in group["rules"]]


def dashboard() -> dict[str, Any]:
    document = json.loads((GRAFANA / "dashboards" / "fiftyk.json").read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def dashboard_expressions() -> list[str]:
    board = dashboard()
    exprs = [target["expr"] for panel in board["panels"] for target in panel.get("targets", [])]
    for variable in board["templating"]["list"]:
        # label_values(SELECTOR, LABEL): only the selector names a series.
        selector = re.fullmatch(r"label_values\((.*),\s*\w+\)", variable["definition"])
        assert selector is not None, variable["definition"]
        exprs.append(selector.group(1))
    return exprs


# Configuration keys.


def test_every_fiftyk_name_in_deploy_files_is_a_configuration_key() -> None:
    used: dict[str, set[str]] = {}
    for path in DEPLOY.rglob("*"):
        if path.is_file():
            for name in re.findall(r"FIFTYK_[A-Z0-9_]+", path.read_text(encoding="utf-8")):
                used.setdefault(name, set()).add(str(path.relative_to(DEPLOY)))
    unknown = {name: files for name, files in used.items() if name not in CONFIG_ENV_VARS}
    assert used and not unknown


def test_configuration_keys_are_unique_and_secrets_are_among_them() -> None:
    assert len(set(CONFIG_ENV_VARS)) == len(CONFIG_ENV_VARS)
    assert set(SECRET_ENV_VARS) <= set(CONFIG_ENV_VARS)


# docker compose.


def test_compose_runs_postgres_15_two_referees_prometheus_and_grafana() -> None:
    services = compose()["services"]
    assert set(services) == {"postgres", "migrate", *REFEREES, "prometheus", "grafana"}
    assert services["postgres"]["image"].startswith("postgres:15")


def test_compose_referees_share_one_database_and_set_only_configuration_keys() -> None:
    services = compose()["services"]
    environments = [services[name]["environment"] for name in REFEREES]
    for environment in environments:
        assert set(environment) <= set(CONFIG_ENV_VARS)
        assert "@postgres:5432/" in environment["FIFTYK_DATABASE_URL"]
    assert environments[0]["FIFTYK_DATABASE_URL"] == environments[1]["FIFTYK_DATABASE_URL"]
    # `migrate` creates the schema once; the replicas start after it and never create it.
    assert [env["FIFTYK_CREATE_SCHEMA"] for env in environments] == ["false", "false"]
    for name in REFEREES:
        assert services[name]["depends_on"] == {
            "migrate": {"condition": "service_completed_successfully"}}
    assert services["migrate"]["command"] == ["migrate"]
    assert services["migrate"]["environment"]["FIFTYK_DATABASE_URL"] == \
        environments[0]["FIFTYK_DATABASE_URL"]


def test_compose_referees_serve_tls_and_prometheus_scrapes_over_https() -> None:
    services = compose()["services"]
    for name in REFEREES:
        environment = services[name]["environment"]
        mounted = {volume.split(":")[1]: volume.split(":")[0]
                   for volume in services[name]["volumes"]}
        assert mounted["/etc/fiftyk/tls"] == "./tls"
        assert environment["FIFTYK_TLS_CERT_FILE"].startswith("/etc/fiftyk/tls/")
        assert environment["FIFTYK_TLS_KEY_FILE"].startswith("/etc/fiftyk/tls/")
        check = services[name]["healthcheck"]["test"]
        assert check[1:3] == ["fiftyk", "health"] and "--tls-ca" in check
        args = build_parser().parse_args(check[2:])
        assert args.tls_ca.startswith("/etc/fiftyk/tls/")
        # With client certificates required, a check without one could never pass.
        assert (args.tls_cert, args.tls_key) == (environment["FIFTYK_TLS_CERT_FILE"],
                                                 environment["FIFTYK_TLS_KEY_FILE"])
    [config] = yaml_documents(PROMETHEUS / "prometheus.yml")
    [job] = [job for job in config["scrape_configs"] if job["job_name"] == "fiftyk-referee"]
    assert job["scheme"] == "https" and job["tls_config"]["ca_file"].startswith(
        "/etc/prometheus/tls/")


def test_compose_secrets_come_from_the_environment_and_must_be_set() -> None:
    services = compose()["services"]
    for name in REFEREES:
        environment = services[name]["environment"]
        for key in SECRET_ENV_VARS:
            assert re.search(r"\$\{\w+:\?", environment[key]), f"{name} {key} has a default"


def test_compose_publishes_each_referees_grpc_port() -> None:
    services = compose()["services"]
    grpc_port = services["referee-1"]["environment"][PORT]
    published = [services[name]["ports"][0].split(":") for name in REFEREES]
    assert [container for _, container in published] == [grpc_port, grpc_port]
    assert len({host for host, _ in published}) == len(REFEREES)


def test_prometheus_scrapes_every_referee_on_its_metrics_port() -> None:
    services = compose()["services"]
    [config] = yaml_documents(PROMETHEUS / "prometheus.yml")
    [job] = [job for job in config["scrape_configs"] if job["job_name"] == "fiftyk-referee"]
    targets = {target for static in job["static_configs"] for target in static["targets"]}
    assert targets == {f"{name}:{services[name]['environment'][METRICS_PORT]}"
                       for name in REFEREES}


def test_compose_mounts_the_prometheus_and_grafana_files_that_exist() -> None:
    services = compose()["services"]
    for name in ("prometheus", "grafana"):
        for volume in services[name]["volumes"]:
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (DEPLOY / source).is_dir(), volume
    [provider] = yaml_documents(GRAFANA / "provisioning" / "dashboards" / "fiftyk.yml")
    mounts = {volume.split(":")[1] for volume in services["grafana"]["volumes"]}
    assert provider["providers"][0]["options"]["path"] in mounts


# Dockerfile.


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [(line.split()[0].upper(), line.split(maxsplit=1)[1])
            for line in lines if line and not line.startswith("#")]


def test_dockerfile_builds_in_two_stages_and_runs_as_a_non_root_user() -> None:
    instructions = dockerfile_instructions()
    stages = [args for keyword, args in instructions if keyword == "FROM"]
    users = [args for keyword, args in instructions if keyword == "USER"]
    assert len(stages) >= 2 and "AS build" in stages[0]
    assert users and users[-1].split(":")[0] not in {"root", "0"}


def test_dockerfile_health_check_asks_the_grpc_health_service_on_the_grpc_port() -> None:
    instructions = dockerfile_instructions()
    [healthcheck] = [args for keyword, args in instructions if keyword == "HEALTHCHECK"]
    assert "fiftyk health --server" in healthcheck and "${FIFTYK_PORT}" in healthcheck
    environment = " ".join(args for keyword, args in instructions if keyword == "ENV")
    assert set(re.findall(r"(FIFTYK_\w+)=", environment)) <= set(CONFIG_ENV_VARS)
    args = build_parser().parse_args(["health", "--server", "127.0.0.1:50051"])
    assert args.command == "health"


# Kubernetes.


def test_kubernetes_manifests_have_every_required_kind() -> None:
    assert {"Deployment", "Service/fiftyk-referee", "ConfigMap", "PodDisruptionBudget",
            "HorizontalPodAutoscaler", "Kustomization"} <= set(manifests())


def test_kustomization_lists_every_manifest() -> None:
    resources = set(manifests()["Kustomization"]["resources"])
    files = {path.name for path in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert resources == files


def test_probes_run_fiftyk_health_over_tls_on_the_grpc_port() -> None:
    container = referee_container()
    data = manifests()["ConfigMap"]["data"]
    configured = int(data[PORT])
    assert container_port("grpc") == configured
    mounts = {mount["name"]: mount["mountPath"] for mount in container["volumeMounts"]}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        command = container[probe]["exec"]["command"]
        assert command[:2] == ["fiftyk", "health"], probe
        args = build_parser().parse_args(command[1:])
        assert args.server == f"127.0.0.1:{configured}", probe
        assert args.tls_ca.startswith(mounts["tls"] + "/"), probe
        # The pod's own certificate is the probe's client certificate: the probes still
        # pass when FIFTYK_TLS_CLIENT_CA_FILE makes the server require one.
        assert (args.tls_cert, args.tls_key) == (data["FIFTYK_TLS_CERT_FILE"],
                                                 data["FIFTYK_TLS_KEY_FILE"]), probe
        # Liveness must not follow the database: restarting does not bring it back.
        assert args.service == ("liveness" if probe == "livenessProbe" else ""), probe
    assert data["FIFTYK_TLS_CERT_FILE"].startswith(mounts["tls"] + "/")
    assert data["FIFTYK_TLS_KEY_FILE"].startswith(mounts["tls"] + "/")


def test_a_job_creates_the_schema_and_the_pods_do_not() -> None:
    objects = manifests()
    assert objects["ConfigMap"]["data"]["FIFTYK_CREATE_SCHEMA"] == "false"
    job = objects["Job"]
    [container] = job["spec"]["template"]["spec"]["containers"]
    assert container["args"] == ["migrate"]
    assert container["image"] == referee_container()["image"]
    [url] = [item for item in container["env"] if item["name"] == "FIFTYK_DATABASE_URL"]
    assert url["valueFrom"]["secretKeyRef"]["key"] == "FIFTYK_DATABASE_URL"


def test_pods_are_annotated_for_scraping_on_the_metrics_port() -> None:
    template = manifests()["Deployment"]["spec"]["template"]
    annotations = template["metadata"]["annotations"]
    configured = int(manifests()["ConfigMap"]["data"][METRICS_PORT])
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/scheme"] == "https"  # the metrics port speaks TLS
    assert int(annotations["prometheus.io/port"]) == container_port("metrics") == configured


def test_secrets_are_referenced_from_a_secret_and_the_config_map_holds_no_secret() -> None:
    objects = manifests()
    container = referee_container()
    config_map = objects["ConfigMap"]
    from_secret = {
        item["name"]: item["valueFrom"]["secretKeyRef"] for item in container["env"]
    }
    assert set(from_secret) == set(SECRET_ENV_VARS)
    assert all(ref["key"] == name for name, ref in from_secret.items())
    assert set(config_map["data"]) <= set(CONFIG_ENV_VARS) - set(SECRET_ENV_VARS)
    assert container["envFrom"] == [{"configMapRef": {"name": config_map["metadata"]["name"]}}]
    assert not any(key.startswith("Secret") for key in objects)


def test_service_budget_and_autoscaler_select_the_deployments_pods() -> None:
    objects = manifests()
    deployment = objects["Deployment"]
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    selectors = [
        objects["Service/fiftyk-referee"]["spec"]["selector"],
        objects["Service/fiftyk-referee-headless"]["spec"]["selector"],
        objects["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"],
        deployment["spec"]["selector"]["matchLabels"],
    ]
    assert all(selector.items() <= pod_labels.items() for selector in selectors)
    target = objects["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert objects["HorizontalPodAutoscaler"]["spec"]["minReplicas"] >= 2
    assert objects["PodDisruptionBudget"]["spec"]["minAvailable"] >= 1


def test_pods_run_as_the_images_non_root_user() -> None:
    security = manifests()["Deployment"]["spec"]["template"]["spec"]["securityContext"]
    [user] = [args for keyword, args in dockerfile_instructions() if keyword == "USER"]
    assert security["runAsNonRoot"] is True
    assert str(security["runAsUser"]) == user.split(":")[0]


def test_alerts_cover_error_ratio_latency_and_conflicts() -> None:
    names = set().union(*(metric_names(expr) for expr in alert_expressions()))
    assert {"grpc_server_handled_total", "grpc_server_handling_seconds_bucket",
            "fiftyk_event_store_conflicts_total"} <= names


# Metric names queried by the dashboard and the alerts.


def test_metric_name_extraction_skips_functions_labels_and_durations() -> None:
    expr = ('histogram_quantile(0.99, sum by (le, job) (rate(a_bucket{x="b_total", y=~"$v"}'
            '[$__rate_interval]))) / on (job) group_left c_total > 1e-3 and bool d')
    assert metric_names(expr) == {"a_bucket", "c_total", "d"}


def test_every_metric_the_alerts_query_is_exported() -> None:
    queried = set().union(*(metric_names(expr) for expr in alert_expressions()))
    assert queried - exported_series() - PROMETHEUS_SERIES == set()


def test_every_metric_the_dashboard_queries_is_exported() -> None:
    queried = set().union(*(metric_names(expr) for expr in dashboard_expressions()))
    assert queried and queried - exported_series() - PROMETHEUS_SERIES == set()


def test_dashboard_shows_every_exported_metric_family() -> None:
    queried = " ".join(dashboard_expressions())
    families = {re.sub(r"(_bucket|_sum|_count|_created)$", "", name)
                for name in exported_series() if not name.endswith("_created")}
    assert {family for family in families if family not in queried} == set()


# Grafana.


def test_dashboard_uses_the_provisioned_datasource_and_unique_panel_ids() -> None:
    [provisioning] = yaml_documents(GRAFANA / "provisioning" / "datasources" / "prometheus.yml")
    [datasource] = provisioning["datasources"]
    board = dashboard()
    uids = {panel["datasource"]["uid"] for panel in board["panels"] if "datasource" in panel}
    assert uids == {datasource["uid"]}
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    assert datasource["url"] == "http://prometheus:9090" and "prometheus" in compose()["services"]


def test_dashboard_and_alerts_work_under_any_scrape_job_name() -> None:
    # A job matcher with a fixed name silently shows nothing under another scrape config.
    fixed_job = re.compile(r'job\s*=\s*"')
    assert [expr for expr in alert_expressions() if fixed_job.search(expr)] == []
    assert [expr for expr in dashboard_expressions() if fixed_job.search(expr)] == []
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    assert "fiftyk_" in variables["job"]["query"]["query"]  # jobs that export referee metrics


def test_an_alert_pages_when_a_replica_cannot_reach_the_event_store() -> None:
    assert any("fiftyk_event_store_up" in expr for expr in alert_expressions())


def test_the_example_environment_files_secrets_are_refused_on_any_address() -> None:
    example = dict(line.split("=", 1) for line in (DEPLOY / ".env.example").read_text()
                   .splitlines() if line and not line.startswith("#"))
    copied = {name: value for name, value in example.items() if name in SECRET_ENV_VARS}
    assert copied  # the example names the server's secrets
    for name, value in copied.items():
        for host in ("127.0.0.1", "0.0.0.0"):
            with pytest.raises(ConfigError, match=f"{name} is still the example"):
                Config.load({name: value, "FIFTYK_HOST": host,
                             "FIFTYK_TRUSTED_NETWORK": "true"})
    url = (f"postgresql://fiftyk:{example['POSTGRES_PASSWORD']}@postgres:5432/fiftyk")
    with pytest.raises(ConfigError, match="password is still the example"):
        Config.load({"FIFTYK_DATABASE_URL": url})


# High availability (docker-compose.ha.yml).


def ha_compose() -> dict[str, Any]:
    [document] = yaml_documents(DEPLOY / "docker-compose.ha.yml")
    assert isinstance(document, dict)
    return document


def test_ha_compose_runs_a_monitor_two_synchronous_nodes_and_a_referee() -> None:
    services = ha_compose()["services"]
    assert set(services) == {"monitor", "node1", "node2", "referee"}
    assert "pg_autoctl create monitor" in services["monitor"]["command"]
    for node in ("node1", "node2"):
        command = services[node]["command"]
        assert command.startswith("pg_autoctl create postgres") and "--run" in command
        # Every node is in the write quorum (pg_autoctl's default): no --replication-quorum
        # false, so an acknowledged command is on the standby before the answer.
        assert "replication-quorum" not in command
        monitor = services[node]["environment"]["PG_AUTOCTL_MONITOR"]
        assert "@monitor/pg_auto_failover" in monitor


def test_ha_referee_is_given_every_node_and_the_url_is_accepted() -> None:
    environment = ha_compose()["services"]["referee"]["environment"]
    assert set(environment) <= set(CONFIG_ENV_VARS)
    database = parse_database_url(environment["FIFTYK_DATABASE_URL"], Path())
    assert database.kind == "postgresql"
    assert database.addresses == "node1:5432,node2:5432"
    assert database.param("target_session_attrs") == "read-write"
    assert int(environment["FIFTYK_DB_TIMEOUT_SECONDS"]) < MIN_CLIENT_DEADLINE_SECONDS


def test_an_alert_tells_when_the_replicas_followed_a_database_failover() -> None:
    assert any("fiftyk_event_store_failovers_total" in expr for expr in alert_expressions())
