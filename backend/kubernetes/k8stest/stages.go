package k8stest

import (
	"fmt"
	"strings"
)

// Stages are the KWOK stage configs the tests use. Pods pass through: Pending -> Running
// (pod-run) -> Succeeded (pod-succeed) or Failed (pod-fail), each after DelayMS. A pod fails when
// it has the label jikken-test/outcome=fail (exit code 3) or =exit-1 (exit code 1), or =fail-once
// on attempt 1 (label jikken.dev/attempt=1, or an Argo step's first try); a pod labelled
// =bad-image never pulls its image; =hang never ends, =hang-once only on attempt 1;
// =fail-index-1 fails (exit code 3) at completion index 1 of an Indexed Job alone. A label
// jikken-test/delay ("30s") overrides how long a pod runs. Containers report the image ID
// IMAGE@sha256:FakeDigest, as a kubelet reports the digest it ran. Nodes are made Ready once. A node
// labelled jikken-test/lost is reported NotReady, as a kubelet whose container runtime died
// reports it: the node controller then taints it node.kubernetes.io/not-ready:NoExecute and the
// taint eviction controller evicts its pods once their toleration runs out. (KWOK keeps
// renewing the lease of a node it once managed even after its annotation is removed, so
// dropping the annotation does not make the node controller notice anything.)
const baseStages = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-ready
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
    - key: '.metadata.labels["jikken-test/lost"]'
      operator: DoesNotExist
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}
      addresses:
      - address: {{ NodeIP | Quote }}
        type: InternalIP
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-lost
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - key: '.metadata.labels["jikken-test/lost"]'
      operator: Exists
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: In
      values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
        message: 'container runtime is down'
        reason: KubeletNotReady
        status: 'False'
        type: Ready
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-run
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: ['Pending']
    - key: '.spec.nodeName'
      operator: Exists
    - key: '.metadata.labels["jikken-test/outcome"]'
      operator: NotIn
      values: ['bad-image']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Initialized}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Ready}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: ContainersReady}
      initContainerStatuses:
      {{ range .spec.initContainers }}
      - image: {{ .image | Quote }}
        imageID: {{ printf "%s@sha256:{{DIGEST}}" .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        state: {terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        imageID: {{ printf "%s@sha256:{{DIGEST}}" .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        started: true
        state: {running: {startedAt: {{ $now | Quote }}}}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName false ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: Exists
  next:
    delete: true
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-bad-image
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.spec.nodeName'
      operator: Exists
    - key: '.status.phase'
      operator: In
      values: ['Pending']
    - key: '.metadata.labels["jikken-test/outcome"]'
      operator: In
      values: ['bad-image']
    - key: '.status.containerStatuses'
      operator: DoesNotExist
  next:
    statusTemplate: |
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        state: {waiting: {reason: ImagePullBackOff, message: 'Back-off pulling image "{{ .image }}"'}}
      {{ end }}
      phase: Pending
`

// endStage is the stage that ends a Running pod whose labels match outcome after the delay,
// with exitCode and phase; the pod-* end stages differ only in these.
func endStage(name, outcome string, exitCode int, reason, phase string) string {
	return fmt.Sprintf(`---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: %s
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: ['Running']
%s
  delay: {durationMilliseconds: {{DELAY}}, jitterDurationMilliseconds: {{JITTER}}, durationFrom: {expressionFrom: '.metadata.labels["jikken-test/delay"]'}}
  next:
    statusTemplate: |
      {{ $now := Now }}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        imageID: {{ printf "%%s@sha256:{{DIGEST}}" .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state: {terminated: {exitCode: %d, reason: %s, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}}
      {{ end }}
      phase: %s
`, name, strings.TrimRight(outcome, "\n"), exitCode, reason, phase)
}

// failIndex1 selects the pods labelled =fail-index-1 whose completion index is (operator In)
// or is not (NotIn) 1; the operator completes it.
const failIndex1 = `    - key: '.metadata.labels["jikken-test/outcome"]'
      operator: In
      values: ['fail-index-1']
    - key: '(.metadata.annotations["batch.kubernetes.io/job-completion-index"] // "")'
      values: ['1']
      operator: `

// outcome selectors of the end stages.
const (
	noOutcome = `    - key: '.metadata.labels["jikken-test/outcome"]'
      operator: DoesNotExist`
	atIndex1     = failIndex1 + "In"
	notAtIndex1  = failIndex1 + "NotIn"
	laterAttempt = `    - key: '.metadata.labels["jikken-test/outcome"]'
      operator: In
      values: ['fail-once', 'hang-once']
    - key: '.metadata.labels["jikken.dev/attempt"]'
      operator: NotIn
      values: ['1']
` + notFirstArgoTry
	// An Argo step's tries are pods of nodes named STEP(0), STEP(1), ...
	argoFirstTry    = `'(.metadata.annotations["workflows.argoproj.io/node-name"] // "") | endswith("(0)")'`
	notFirstArgoTry = `    - key: ` + argoFirstTry + `
      operator: NotIn
      values: ['true']`
	firstArgoTryFails = `    - key: '.metadata.labels["jikken-test/outcome"]'
      operator: In
      values: ['fail-once']
    - key: ` + argoFirstTry + `
      operator: In
      values: ['true']`
	alwaysFails = `    - key: '.metadata.labels["jikken-test/outcome"]'
      operator: In
      values: ['fail']`
	exitsWith1 = `    - key: '.metadata.labels["jikken-test/outcome"]'
      operator: In
      values: ['exit-1']`
	firstAttemptFails = `    - key: '.metadata.labels["jikken-test/outcome"]'
      operator: In
      values: ['fail-once']
    - key: '.metadata.labels["jikken.dev/attempt"]'
      operator: In
      values: ['1']`
)

var stagesTemplate = baseStages +
	endStage("pod-succeed", noOutcome, 0, "Completed", "Succeeded") +
	endStage("pod-succeed-on-retry", laterAttempt, 0, "Completed", "Succeeded") +
	endStage("pod-fail", alwaysFails, 3, "Error", "Failed") +
	endStage("pod-exit-1", exitsWith1, 1, "Error", "Failed") +
	endStage("pod-fail-first-attempt", firstAttemptFails, 3, "Error", "Failed") +
	endStage("pod-fail-first-argo-try", firstArgoTryFails, 3, "Error", "Failed") +
	endStage("pod-fail-at-index-1", atIndex1, 3, "Error", "Failed") +
	endStage("pod-succeed-elsewhere", notAtIndex1, 0, "Completed", "Succeeded")
