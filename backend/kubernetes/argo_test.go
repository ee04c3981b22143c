package kubernetes

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/store"
)

// argoManifest is a small plan: a service, two trials after it, a final step after both.
func argoManifest() *store.Manifest {
	svc := experiment.Trial{Name: "db", Index: 0, Image: "redis:7", Cmd: experiment.Command{Shell: "redis-server"}, Service: true,
		Health: &experiment.Health{TCP: "localhost:6379"}}
	a := trial("train/a")
	a.Index, a.Retries, a.Backoff = 1, 2, experiment.Duration(5*time.Second)
	a.Depends = []experiment.Dependency{{Trial: "db", Condition: experiment.Healthy}}
	b := trial("train/b")
	b.Index = 2
	b.Resources = experiment.Resources{CPU: 2}
	b.Depends = []experiment.Dependency{{Trial: "db", Condition: experiment.Healthy}}
	final := experiment.Trial{Name: "report", Index: 3, Image: "alpine", Cmd: experiment.Command{Argv: []string{"echo", "done"}}, After: []string{"train/a", "train/b"}}
	return &store.Manifest{RunID: "20260101-000000-sweep-ab12", Experiment: "sweep", Options: store.RunOptions{Jobs: 3},
		Trials: []experiment.Trial{svc, a, b, final}}
}

func TestWorkflowStructure(t *testing.T) {
	cfg := Config{StoreURL: "s3://bucket/runs", StoreSecret: "jikken-s3", ExecutorImage: "jikken:test"}
	if _, err := cfg.WorkflowOf(argoManifest()); err == nil || !strings.Contains(err.Error(), "pass --namespace") {
		t.Fatalf("services without a namespace: %v", err)
	}
	cfg.Namespace = "team"
	wf, err := cfg.WorkflowOf(argoManifest())
	if err != nil {
		t.Fatal(err)
	}
	y, err := wf.YAML()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(y, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["apiVersion"] != "argoproj.io/v1alpha1" || doc["kind"] != "Workflow" {
		t.Fatalf("header %v %v", doc["apiVersion"], doc["kind"])
	}
	spec := doc["spec"].(map[string]any)
	// Argo's parallelism would count the service's pod (and the one creating the run's Service):
	// -j 3 is a semaphore of 3 seats that only the trials take.
	if spec["entrypoint"] != "main" || spec["parallelism"] != nil {
		t.Errorf("entrypoint %v parallelism %v", spec["entrypoint"], spec["parallelism"])
	}
	templates := map[string]map[string]any{}
	for _, x := range spec["templates"].([]any) {
		tm := x.(map[string]any)
		templates[tm["name"].(string)] = tm
	}
	tasks := map[string]string{}
	taskTemplate := map[string]string{}
	for _, x := range templates["main"]["dag"].(map[string]any)["tasks"].([]any) {
		task := x.(map[string]any)
		d, _ := task["depends"].(string)
		tasks[task["name"].(string)] = d
		taskTemplate[task["name"].(string)] = task["template"].(string)
	}
	if len(tasks) != 6 {
		t.Fatalf("tasks %v", tasks)
	}
	nameA, nameB := shortName("train/a", 60), shortName("train/b", 60)
	if tasks[servicesTask] != "" || tasks[limitTask] != "" || tasks["db"] != servicesTask+".Succeeded" ||
		tasks[nameA] != "(db.Daemoned || db.Succeeded) && "+limitTask+".Succeeded" || tasks["report"] != nameA+".Succeeded && "+nameB+".Succeeded" {
		t.Errorf("depends %v", tasks)
	}
	cm := LimitConfigMapName("20260101-000000-sweep-ab12")
	lim := templates[limitTask]["resource"].(map[string]any)
	if lim["action"] != "apply" || lim["setOwnerReference"] != true || !strings.Contains(lim["manifest"].(string), "name: "+cm) ||
		!strings.Contains(lim["manifest"].(string), `trials: "3"`) {
		t.Errorf("the run's semaphore template %v", lim)
	}
	for _, name := range []string{nameA, nameB, "report", "db"} {
		sync, _ := templates[name]["synchronization"].(map[string]any)
		if name == "db" {
			if sync != nil {
				t.Errorf("the service takes a seat of -j: %v", sync)
			}
			continue
		}
		sems, _ := sync["semaphores"].([]any)
		if len(sems) != 1 || sems[0].(map[string]any)["configMapKeyRef"].(map[string]any)["name"] != cm {
			t.Errorf("%s holds no seat of -j: %v", name, sync)
		}
	}
	db := templates["db"]
	if db["daemon"] != true || db["container"].(map[string]any)["readinessProbe"] == nil {
		t.Errorf("a service is a daemon step with a readiness probe: %v", db)
	}
	// The service keeps its name: hostname and subdomain in the run's Service, which the
	// workflow creates and every pod searches.
	svcName := RunServiceName("20260101-000000-sweep-ab12")
	if db["podSpecPatch"] != `{"hostname":"db","subdomain":"`+svcName+`"}` || db["metadata"].(map[string]any)["labels"].(map[string]any)[LabelService] != "true" {
		t.Errorf("service pod patch %v labels %v", db["podSpecPatch"], db["metadata"])
	}
	if dns := spec["dnsConfig"].(map[string]any)["searches"].([]any); len(dns) != 1 || dns[0] != svcName+".team.svc.cluster.local" {
		t.Errorf("dnsConfig %v", dns)
	}
	res := templates[servicesTask]["resource"].(map[string]any)
	if res["action"] != "apply" || res["setOwnerReference"] != true || !strings.Contains(res["manifest"].(string), "clusterIP: None") ||
		!strings.Contains(res["manifest"].(string), "name: "+svcName) {
		t.Errorf("the run's Service template %v", res)
	}
	ta := templates[nameA]
	rs := ta["retryStrategy"].(map[string]any)
	if rs["limit"] != float64(2) || rs["backoff"].(map[string]any)["duration"] != "5s" || ta["activeDeadlineSeconds"] != float64(90) {
		t.Errorf("retry %v deadline %v", rs, ta["activeDeadlineSeconds"])
	}
	c := ta["container"].(map[string]any)
	if c["resources"].(map[string]any)["limits"].(map[string]any)["nvidia.com/gpu"] != "2" {
		t.Errorf("resources %v", c["resources"])
	}
	if ta["nodeSelector"].(map[string]any)["pool"] != "gpu" {
		t.Errorf("node selector %v", ta["nodeSelector"])
	}
	cmd := strings.Join(toStrings(c["command"]), " ")
	if !strings.Contains(cmd, "trial-exec --store s3://bucket/runs") || !strings.Contains(cmd, "--record") || strings.Contains(cmd, "--no-stdout-metrics") {
		t.Errorf("command %s", cmd)
	}
	env := map[string]string{}
	for _, e := range c["env"].([]any) {
		m := e.(map[string]any)
		v, _ := m["value"].(string)
		env[m["name"].(string)] = v
	}
	if env["JIKKEN_RUN_ID"] != "20260101-000000-sweep-ab12" || env["JIKKEN_TRIAL"] != "train/a" || !strings.Contains(env["JIKKEN_RECORD_JSON"], `"backend":"argo"`) ||
		env["JIKKEN_ATTEMPT"] != "{{=asInt(retries) + 1}}" {
		t.Errorf("env %v", env)
	}
	if !strings.Contains(string(y), "secretRef:\n") || strings.Contains(string(y), "AWS_SECRET_ACCESS_KEY") {
		t.Error("store credentials come from the Secret, never inline")
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// A run without services keeps Argo's parallelism, which then counts exactly its trials.
func TestWorkflowParallelismWithoutServices(t *testing.T) {
	m := argoManifest()
	m.Trials = m.Trials[1:]
	for i := range m.Trials {
		m.Trials[i].Depends = nil
	}
	cfg := Config{StoreURL: "s3://bucket/runs", ExecutorImage: "jikken:test"}
	wf, err := cfg.WorkflowOf(m)
	if err != nil {
		t.Fatal(err)
	}
	if p := wf.Spec.Parallelism; p == nil || *p != 3 {
		t.Errorf("parallelism %v, want -j 3", p)
	}
	for _, tm := range wf.Spec.Templates {
		if tm.Synchronization != nil || tm.Name == limitTask {
			t.Errorf("template %s: no semaphore without services", tm.Name)
		}
	}
}
