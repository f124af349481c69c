package dev.tandem.coordinator.service;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import dev.tandem.coordinator.client.CoordinatorGroup;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.yaml.snakeyaml.Yaml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Tests of the {@code helm/tandem} chart with the helm library that helm-java carries (no helm
 * install needed): it lints, and the rendered manifests wire the peers together.
 */
@SuppressWarnings("unchecked")
class HelmChartTests {

	private static final Logger logger = LoggerFactory.getLogger(HelmChartTests.class);

	private static final Path CHART = Path.of("..", "helm", "tandem").toAbsolutePath().normalize();

	@Test
	void chartPassesStrictLint() {
		assertThat(CHART.resolve("Chart.yaml")).exists();
		LintResult result = new Helm(CHART).lint().strict().call();
		logger.info("helm lint --strict {}: {}", CHART, result.getMessages());
		assertThat(result.isFailed()).as("lint messages %s", result.getMessages()).isFalse();
	}

	@Test
	void defaultsRenderThreePeersOneVolumeEachAMajorityBudgetAndTheReadinessProbe() {
		Map<String, Map<String, Object>> manifests = render((template) -> template);

		Map<String, Object> statefulSet = manifests.get("StatefulSet/tandem-coordinator");
		assertThat(at(statefulSet, "spec.replicas")).isEqualTo(3);
		assertThat(at(statefulSet, "spec.podManagementPolicy")).isEqualTo("Parallel");
		assertThat(at(statefulSet, "spec.serviceName")).isEqualTo("tandem-coordinator-peers");
		Map<String, Object> container = first(at(statefulSet, "spec.template.spec.containers"));
		Map<String, Object> env = env(container);
		assertThat(env.get("TANDEM_COORDINATOR_SERVER_PEER_ID")).isEqualTo("$(POD_NAME)");
		assertThat(env.get("TANDEM_COORDINATOR_SERVER_PEERS")).isEqualTo("tandem-coordinator-0="
				+ "tandem-coordinator-0.tandem-coordinator-peers.prod.svc.cluster.local:9872,"
				+ "tandem-coordinator-1=tandem-coordinator-1.tandem-coordinator-peers.prod.svc.cluster.local:9872,"
				+ "tandem-coordinator-2=tandem-coordinator-2.tandem-coordinator-peers.prod.svc.cluster.local:9872");
		assertThat(at(container, "readinessProbe.httpGet.path")).isEqualTo("/actuator/health/readiness");
		assertThat(at(container, "readinessProbe.httpGet.port")).isEqualTo("http");
		assertThat(at(container, "livenessProbe.httpGet.path")).isEqualTo("/actuator/health/liveness");
		assertThat(at(container, "resources.requests.cpu")).isEqualTo("250m");
		assertThat(at(container, "resources.limits.memory")).isEqualTo("512Mi");

		Map<String, Object> claim = first(at(statefulSet, "spec.volumeClaimTemplates"));
		assertThat(at(claim, "metadata.name")).isEqualTo("data");
		assertThat(at(claim, "spec.resources.requests.storage")).isEqualTo("1Gi");
		assertThat(at(claim, "spec.accessModes")).isEqualTo(List.of("ReadWriteOnce"));
		Map<String, Object> mount = first(at(container, "volumeMounts"));
		assertThat(mount).containsEntry("name", "data").containsEntry("mountPath", env.get("TANDEM_COORDINATOR_SERVER_DATA_DIR"));

		Map<String, Object> budget = manifests.get("PodDisruptionBudget/tandem-coordinator");
		assertThat(at(budget, "spec.minAvailable")).isEqualTo(2);
		assertThat(at(budget, "spec.selector.matchLabels")).isEqualTo(at(statefulSet, "spec.selector.matchLabels"));

		Map<String, Object> headless = manifests.get("Service/tandem-coordinator-peers");
		assertThat(at(headless, "spec.clusterIP")).isEqualTo("None");
		assertThat(at(headless, "spec.publishNotReadyAddresses")).isEqualTo(true);
		assertThat(at(headless, "spec.selector")).isEqualTo(at(statefulSet, "spec.selector.matchLabels"));

		assertThat(manifests.keySet()).noneMatch((key) -> key.startsWith("Deployment/"));
	}

	@Test
	void renderedPeerEnvironmentBindsToAValidGroupForEveryPod() {
		Map<String, Map<String, Object>> manifests = render((template) -> template);
		Map<String, Object> env = env(first(at(manifests.get("StatefulSet/tandem-coordinator"), "spec.template.spec.containers")));
		for (int pod = 0; pod < 3; pod++) {
			Map<String, Object> podEnv = new LinkedHashMap<>(env);
			podEnv.put("TANDEM_COORDINATOR_SERVER_PEER_ID", "tandem-coordinator-" + pod);
			podEnv.remove("POD_NAME");
			Binder binder = new Binder(
					ConfigurationPropertySources.from(new SystemEnvironmentPropertySource("pod-env", podEnv)));
			CoordinatorServerProperties properties = binder
				.bind("tandem.coordinator.server", CoordinatorServerProperties.class)
				.get();
			CoordinatorGroup group = properties.group();
			assertThat(group.peers()).hasSize(3).containsKey("tandem-coordinator-" + pod);
			assertThat(group.groupId()).isEqualTo(CoordinatorGroup.DEFAULT_GROUP_ID);
			assertThat(properties.getDataDir()).isEqualTo(Path.of("/var/lib/tandem/coordinator"));
			assertThat(properties.getElectionTimeout().getMax()).isEqualTo(Duration.ofMillis(300));
			assertThat(properties.getShutdown().isTransferLeadership()).isTrue();
		}
	}

	@Test
	void fivePeersWithTheSampleAppKeepAMajorityBudgetAndPointTheAppAtTheSamePeers() {
		Map<String, Map<String, Object>> manifests = render((template) -> template.set("coordinator.replicas", 5)
			.set("sampleApp.enabled", true)
			.set("sampleApp.env.TANDEM_CLUSTERS_EAST_BOOTSTRAP_SERVERS", "kafka-east:9092"));
		Map<String, Object> statefulSet = manifests.get("StatefulSet/tandem-coordinator");
		assertThat(at(statefulSet, "spec.replicas")).isEqualTo(5);
		assertThat(at(manifests.get("PodDisruptionBudget/tandem-coordinator"), "spec.minAvailable")).isEqualTo(3);
		String peers = (String) env(first(at(statefulSet, "spec.template.spec.containers")))
			.get("TANDEM_COORDINATOR_SERVER_PEERS");
		assertThat(CoordinatorGroup.parse(peers).peers()).hasSize(5);

		Map<String, Object> app = manifests.get("Deployment/tandem-sample-app");
		Map<String, Object> appEnv = env(first(at(app, "spec.template.spec.containers")));
		assertThat(appEnv).containsEntry("TANDEM_COORDINATOR_MODE", "remote")
			.containsEntry("TANDEM_COORDINATOR_PEERS", peers)
			.containsEntry("TANDEM_CLUSTERS_EAST_BOOTSTRAP_SERVERS", "kafka-east:9092");
		assertThat(manifests).containsKey("Service/tandem-sample-app");
	}

	@Test
	void everyContainerMeetsTheRestrictedPodSecurityStandard() {
		Map<String, Map<String, Object>> manifests = render((template) -> template.set("sampleApp.enabled", true));
		for (String workload : List.of("StatefulSet/tandem-coordinator", "Deployment/tandem-sample-app")) {
			Map<String, Object> pod = (Map<String, Object>) at(manifests.get(workload), "spec.template.spec");
			assertThat(at(pod, "securityContext.runAsNonRoot")).as(workload).isEqualTo(true);
			assertThat(at(pod, "securityContext.seccompProfile.type")).as(workload).isEqualTo("RuntimeDefault");
			Map<String, Object> container = first(pod.get("containers"));
			assertThat(at(container, "securityContext.allowPrivilegeEscalation")).as(workload).isEqualTo(false);
			assertThat(at(container, "securityContext.runAsNonRoot")).as(workload).isEqualTo(true);
			assertThat(at(container, "securityContext.readOnlyRootFilesystem")).as(workload).isEqualTo(true);
			assertThat(at(container, "securityContext.capabilities.drop")).as(workload).isEqualTo(List.of("ALL"));
			assertThat(at(container, "securityContext.seccompProfile.type")).as(workload).isEqualTo("RuntimeDefault");
			// a read-only root needs a writable /tmp (JVM, Tomcat)
			assertThat((List<Object>) container.get("volumeMounts")).anySatisfy(
					(mount) -> assertThat((Map<String, Object>) mount).containsEntry("mountPath", "/tmp"));
			// no host namespaces, no privileged containers, no host paths
			assertThat(pod).doesNotContainKeys("hostNetwork", "hostPID", "hostIPC");
			assertThat(at(container, "securityContext")).asInstanceOf(InstanceOfAssertFactories.MAP)
				.doesNotContainKey("privileged");
			assertThat((List<Object>) pod.get("volumes")).allSatisfy(
					(volume) -> assertThat((Map<String, Object>) volume).doesNotContainKey("hostPath"));
		}
	}

	@Test
	void peersAndTheSampleAppTakeTheirCertificatesFromSecretsAsSslBundles() {
		Map<String, Map<String, Object>> manifests = render((template) -> template.set("sampleApp.enabled", true)
			.set("coordinator.tls.secretName", "peers-tls")
			.set("coordinator.authorization.apps.flight-router[0]", "flight-router"));
		Map<String, Object> pod = (Map<String, Object>) at(manifests.get("StatefulSet/tandem-coordinator"),
				"spec.template.spec");
		Map<String, Object> env = env(first(pod.get("containers")));
		assertThat(env).containsEntry("TANDEM_COORDINATOR_SERVER_SSL_BUNDLE", "coordinator")
			.containsEntry("SPRING_SSL_BUNDLE_PEM_COORDINATOR_KEYSTORE_CERTIFICATE", "file:/etc/tandem/tls/tls.crt")
			.containsEntry("SPRING_SSL_BUNDLE_PEM_COORDINATOR_KEYSTORE_PRIVATE_KEY", "file:/etc/tandem/tls/tls.key")
			.containsEntry("SPRING_SSL_BUNDLE_PEM_COORDINATOR_TRUSTSTORE_CERTIFICATE", "file:/etc/tandem/tls/ca.crt")
			.doesNotContainKey("TANDEM_COORDINATOR_SERVER_PLAINTEXT_ALLOWED");
		assertThat((String) env.get("SPRING_APPLICATION_JSON"))
			.contains("\"apps\":{\"flight-router\":[\"flight-router\"]}");
		assertThat((List<Object>) pod.get("volumes")).anySatisfy((volume) -> assertThat(at(volume, "secret.secretName"))
			.isEqualTo("peers-tls"));

		Map<String, Object> appPod = (Map<String, Object>) at(manifests.get("Deployment/tandem-sample-app"),
				"spec.template.spec");
		assertThat(env(first(appPod.get("containers")))).containsEntry("TANDEM_COORDINATOR_SSL_BUNDLE", "coordinator")
			.containsEntry("SPRING_SSL_BUNDLE_PEM_COORDINATOR_KEYSTORE_CERTIFICATE", "file:/etc/tandem/tls/tls.crt");
		assertThat((List<Object>) appPod.get("volumes")).anySatisfy((volume) -> assertThat(at(volume, "secret.secretName"))
			.isEqualTo("tandem-sample-app-tls"));

		// plain text only when asked for, and then said so to the server
		Map<String, Object> plain = env(first(at(render((template) -> template.set("coordinator.tls.enabled", false))
			.get("StatefulSet/tandem-coordinator"), "spec.template.spec.containers")));
		assertThat(plain).containsEntry("TANDEM_COORDINATOR_SERVER_PLAINTEXT_ALLOWED", "true")
			.doesNotContainKey("TANDEM_COORDINATOR_SERVER_SSL_BUNDLE");
	}

	@Test
	void theNetworkPolicyOpensTheRaftPortToPeersAndClientsOnly() {
		Map<String, Map<String, Object>> manifests = render((template) -> template.set("sampleApp.enabled", true));
		Map<String, Object> policy = manifests.get("NetworkPolicy/tandem-coordinator");
		assertThat(at(policy, "spec.podSelector.matchLabels"))
			.isEqualTo(at(manifests.get("StatefulSet/tandem-coordinator"), "spec.selector.matchLabels"));
		List<Map<String, Object>> ingress = (List<Map<String, Object>>) at(policy, "spec.ingress");
		Map<String, Object> raft = ingress.get(0);
		assertThat(first(raft.get("ports"))).containsEntry("port", "raft");
		assertThat((List<Object>) raft.get("from")).extracting((peer) -> at(peer, "podSelector.matchLabels"))
			.containsExactly(at(manifests.get("StatefulSet/tandem-coordinator"), "spec.selector.matchLabels"),
					at(manifests.get("Deployment/tandem-sample-app"), "spec.selector.matchLabels"),
					Map.of("tandem.dev/coordinator-client", "true"));
		assertThat(first(ingress.get(1).get("ports"))).containsEntry("port", "http");
		assertThat(render((template) -> template.set("networkPolicy.enabled", false)))
			.doesNotContainKey("NetworkPolicy/tandem-coordinator");
	}

	@Test
	void everySampleAppReplicaHasItsOwnInstanceId() {
		Map<String, Map<String, Object>> manifests = render((template) -> template.set("sampleApp.enabled", true)
			.set("sampleApp.replicas", 3));
		Map<String, Object> container = first(at(manifests.get("Deployment/tandem-sample-app"),
				"spec.template.spec.containers"));
		assertThat(env(container)).containsEntry("TANDEM_TRANSACTION_INSTANCE_ID", "$(POD_NAME)");
		Map<String, Object> podName = (Map<String, Object>) ((List<Object>) container.get("env")).get(0);
		assertThat(podName).containsEntry("name", "POD_NAME");
		assertThat(at(podName, "valueFrom.fieldRef.fieldPath")).isEqualTo("metadata.name");
	}

	@Test
	void theMirrorToggleDeploysTheMirrorWithItsConfigurationAsAClientOfThePeers() {
		assertThat(render((template) -> template)).doesNotContainKeys("Deployment/tandem-mirror", "ConfigMap/tandem-mirror");
		Map<String, Map<String, Object>> manifests = render((template) -> template.set("mirror.enabled", true)
			.set("mirror.replicas", 2)
			.set("mirror.config.tandem.mirror.source", "us")
			.set("mirror.config.tandem.mirror.groups[0]", "billing"));
		Map<String, Object> deployment = manifests.get("Deployment/tandem-mirror");
		assertThat(at(deployment, "spec.replicas")).isEqualTo(2);
		Map<String, Object> container = first(at(deployment, "spec.template.spec.containers"));
		assertThat((List<Object>) container.get("args")).containsExactly(
				"--spring.config.location=file:/etc/tandem/mirror/mirror.yml");
		Map<String, Object> env = env(container);
		assertThat(env).containsEntry("TANDEM_TRANSACTION_INSTANCE_ID", "$(POD_NAME)")
			.containsEntry("TANDEM_COORDINATOR_MODE", "remote");
		assertThat(CoordinatorGroup.parse((String) env.get("TANDEM_COORDINATOR_PEERS")).peers()).hasSize(3);
		assertThat(at(container, "readinessProbe.httpGet.path")).isEqualTo("/actuator/health/readiness");
		Map<String, Object> data = (Map<String, Object>) manifests.get("ConfigMap/tandem-mirror").get("data");
		Map<String, Object> config = new Yaml().load((String) data.get("mirror.yml"));
		assertThat(at(config, "tandem.mirror.source")).isEqualTo("us");
		assertThat(at(config, "tandem.mirror.groups")).isEqualTo(List.of("billing"));
		assertThat(at(config, "tandem.mirror.targets")).isEqualTo(List.of("west"));
		assertThat(manifests.get("NetworkPolicy/tandem-coordinator").toString()).contains("tandem-mirror");
	}

	@Test
	void theValuesSchemaRejectsAnEvenPeerCountAndAnInsecureContainer() {
		assertThat(CHART.resolve("values.schema.json")).exists();
		assertThatThrownBy(() -> render((template) -> template.set("coordinator.replicas", 4)))
			.hasMessageContaining("replicas");
		assertThatThrownBy(() -> render((template) -> template.set("coordinator.securityContext.allowPrivilegeEscalation",
				true)))
			.hasMessageContaining("allowPrivilegeEscalation");
		assertThatThrownBy(() -> render((template) -> template.set("coordinator.tls.enabled", "yes")))
			.hasMessageContaining("enabled");
	}

	@Test
	void alertRulesAndTheDashboardWatchTheMetersThePeersAndAppsRegister() throws Exception {
		assertThat(render((template) -> template)).doesNotContainKeys("PrometheusRule/tandem",
				"ConfigMap/tandem-dashboard");
		Map<String, Map<String, Object>> manifests = render((template) -> template.set("prometheusRule.enabled", true)
			.set("grafanaDashboard.enabled", true));
		List<Map<String, Object>> rules = (List<Map<String, Object>>) first(at(manifests.get("PrometheusRule/tandem"),
				"spec.groups")).get("rules");
		Map<String, String> expressions = new LinkedHashMap<>();
		rules.forEach((rule) -> expressions.put((String) rule.get("alert"), (String) rule.get("expr")));
		assertThat(expressions).containsOnlyKeys("TandemCoordinatorNoLeader", "TandemInDoubtTransactions",
				"TandemHeuristicOutcome", "TandemStaleDecisions", "TandemCoordinatorRefusedRequests",
				"TandemListenerStopped", "TandemListenerStalled", "TandemHangingTransactions");
		assertThat(expressions.get("TandemHangingTransactions")).contains("tandem_transaction_hanging").endsWith("> 0");
		assertThat(expressions.get("TandemListenerStopped")).contains("tandem_listener_containers{state=\"failed\"}")
			.endsWith("> 0");
		assertThat(expressions.get("TandemListenerStalled")).contains("tandem_listener_containers{state=\"stalled\"}")
			.endsWith("> 0");
		assertThat(expressions.get("TandemCoordinatorNoLeader")).contains("tandem_coordinator_peer_leader");
		assertThat(expressions.get("TandemInDoubtTransactions")).contains("tandem_transaction_in_doubt").endsWith("> 0");
		assertThat(expressions.get("TandemHeuristicOutcome")).contains("outcome=\"heuristic\"");
		assertThat(expressions.get("TandemStaleDecisions"))
			.contains("tandem_coordinator_oldest_in_doubt_age_seconds").endsWith("> 900");
		String dashboard = (String) ((Map<String, Object>) at(manifests.get("ConfigMap/tandem-dashboard"), "data"))
			.get("tandem.json");
		Map<String, Object> parsed = new Yaml().load(dashboard);
		assertThat((List<Object>) parsed.get("panels")).hasSize(8);
		assertThat(dashboard).contains("tandem_coordinator_applied_decisions_total", "tandem_transaction_in_doubt");
	}

	@Test
	void theJibImagesAreTheImagesTheChartDeploys() throws Exception {
		Map<String, Object> values = new Yaml().load(Files.readString(CHART.resolve("values.yaml")));
		Map<String, Object> chart = new Yaml().load(Files.readString(CHART.resolve("Chart.yaml")));
		Path root = CHART.getParent().getParent();
		String tag = between(Files.readString(root.resolve("pom.xml")), "<tandem.image.tag>", "</tandem.image.tag>");
		assertThat(tag).isEqualTo(chart.get("appVersion"));
		assertThat(between(Files.readString(root.resolve("coordinator-server/pom.xml")), "<to>", "</to>"))
			.contains("<image>" + at(values, "coordinator.image.repository") + ":${tandem.image.tag}</image>");
		assertThat(between(Files.readString(root.resolve("sample-app/pom.xml")), "<to>", "</to>"))
			.contains("<image>" + at(values, "sampleApp.image.repository") + ":${tandem.image.tag}</image>");
		assertThat(at(values, "coordinator.image.tag")).isEqualTo("");
	}

	private static String between(String text, String start, String end) {
		int from = text.indexOf(start);
		assertThat(from).as("%s in the pom", start).isNotNegative();
		return text.substring(from + start.length(), text.indexOf(end, from));
	}

	private static Map<String, Map<String, Object>> render(UnaryOperator<TemplateCommand> settings) {
		String rendered = settings.apply(new Helm(CHART).template().withName("tandem").withNamespace("prod")).call();
		Map<String, Map<String, Object>> manifests = new LinkedHashMap<>();
		for (Object document : new Yaml().loadAll(rendered)) {
			if (document instanceof Map<?, ?> manifest) {
				@SuppressWarnings("unchecked")
				Map<String, Object> typed = (Map<String, Object>) manifest;
				manifests.put(typed.get("kind") + "/" + at(typed, "metadata.name"), typed);
			}
		}
		logger.info("helm template rendered {}", manifests.keySet());
		return manifests;
	}

	@SuppressWarnings("unchecked")
	private static Object at(Object node, String path) {
		Object current = node;
		for (String key : path.split("\\.")) {
			assertThat(current).as("parent of %s in %s", key, path).isInstanceOf(Map.class);
			current = ((Map<String, Object>) current).get(key);
		}
		return current;
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> first(Object list) {
		assertThat(list).isInstanceOf(List.class);
		return (Map<String, Object>) ((List<Object>) list).get(0);
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> env(Map<String, Object> container) {
		Map<String, Object> env = new LinkedHashMap<>();
		for (Object item : (List<Object>) container.get("env")) {
			Map<String, Object> variable = (Map<String, Object>) item;
			env.put((String) variable.get("name"), variable.get("value"));
		}
		return env;
	}

}
