package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	protoserializer "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func ptr[T any](v T) *T { return &v }

var (
	created = metav1.NewTime(time.Date(2026, 12, 3, 14, 15, 39, 0, time.UTC))
	renewed = metav1.NewMicroTime(time.Date(2026, 12, 3, 14, 16, 1, 123456789, time.UTC))
)

func tm(kind, apiVersion string) metav1.TypeMeta { return metav1.TypeMeta{Kind: kind, APIVersion: apiVersion} }

func meta(name, ns string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: ns, UID: "0b1c2d3e-0000-4000-8000-000000000001", ResourceVersion: "4242", Generation: 1,
		CreationTimestamp: created,
		Labels:            map[string]string{"app": "web"},
		Annotations:       map[string]string{"kubernetes.io/config.seen": "2026-12-03T14:15:39.1Z"},
		ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Time: &created,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`)},
		}},
	}
}

func pod() *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: tm("Pod", "v1"),
		ObjectMeta: func() metav1.ObjectMeta {
			m := meta("web-0", "shop")
			m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", UID: "u-1", Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
			m.Finalizers = []string{"example.com/keep"}
			return m
		}(),
		Spec: corev1.PodSpec{
			NodeName:                      "n1",
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr(int64(30)),
			ActiveDeadlineSeconds:         nil,
			DNSPolicy:                     corev1.DNSClusterFirst,
			ServiceAccountName:            "default",
			AutomountServiceAccountToken:  ptr(false),
			SecurityContext:               &corev1.PodSecurityContext{RunAsNonRoot: ptr(false), RunAsUser: ptr(int64(0)), FSGroup: ptr(int64(2000))},
			Tolerations:                   []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr(resource.MustParse("64Mi"))}}},
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, DefaultMode: ptr(int32(0o644)), Items: []corev1.KeyToPath{{Key: "a", Path: "b"}}}}},
				{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "locked", Optional: ptr(false)}}},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log", Type: ptr(corev1.HostPathDirectory)}}},
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "api", ExpirationSeconds: ptr(int64(3607)), Path: "token"}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "ns", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				}, DefaultMode: ptr(int32(0o420))}}},
			},
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.k8s.io/pause:3.10", Command: []string{"/pause"}, Args: []string{"-v", ""},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{
					{Name: "PLAIN", Value: "x"},
					{Name: "EMPTY"},
					{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "locked"}, Key: "pw", Optional: ptr(true)}}},
					{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu", Divisor: resource.MustParse("1m")}}},
				},
				EnvFrom: []corev1.EnvFromSource{{Prefix: "S_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "locked"}}}},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.1"), corev1.ResourceMemory: resource.MustParse("1e6")},
				},
				VolumeMounts:   []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "cfg", MountPath: "/cfg", ReadOnly: true, SubPath: "b"}},
				LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP, HTTPHeaders: []corev1.HTTPHeader{{Name: "X", Value: "y"}}}}, InitialDelaySeconds: 5, PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}, PeriodSeconds: 2, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
				StartupProbe:   &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, TerminationGracePeriodSeconds: ptr(int64(0))},
				Lifecycle:      &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}},
				SecurityContext: &corev1.SecurityContext{
					Privileged: ptr(false), AllowPrivilegeEscalation: ptr(false),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy: corev1.PullIfNotPresent,
			}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: created}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue}},
			HostIP:     "10.0.0.1", HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}},
			PodIP: "10.244.0.5", PodIPs: []corev1.PodIP{{IP: "10.244.0.5"}},
			StartTime: &created,
			QOSClass:  corev1.PodQOSBurstable,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, RestartCount: 2, Image: "registry.k8s.io/pause:3.10", ImageID: "sha256:abc", ContainerID: "containerd://123",
				Started: ptr(true),
				State:   corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: created}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Signal: 0, Reason: "Error", StartedAt: metav1.Time{}, FinishedAt: created, ContainerID: "containerd://122",
				}},
				AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			}},
		},
	}
}

func node() *corev1.Node {
	return &corev1.Node{
		TypeMeta:   tm("Node", "v1"),
		ObjectMeta: meta("n1", ""),
		Spec: corev1.NodeSpec{
			PodCIDR: "10.244.0.0/24", PodCIDRs: []string{"10.244.0.0/24"},
			Taints: []corev1.Taint{{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute, TimeAdded: &created}},
		},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8148572Ki"), corev1.ResourcePods: resource.MustParse("110"), "hugepages-2Mi": resource.MustParse("0")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8046172Ki")},
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: created, LastTransitionTime: created, Reason: "KubeletReady", Message: "kubelet is posting ready status",
			}},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeHostName, Address: "n1"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo:        corev1.NodeSystemInfo{MachineID: "m", KernelVersion: "6.1", OSImage: "Debian", ContainerRuntimeVersion: "containerd://2.1", KubeletVersion: "v1.36.3", OperatingSystem: "linux", Architecture: "amd64", Swap: &corev1.NodeSwapStatus{Capacity: ptr(int64(0))}},
			Images:          []corev1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 320368}},
			Features:        &corev1.NodeFeatures{SupplementalGroupsPolicy: ptr(true)},
			RuntimeHandlers: []corev1.NodeRuntimeHandler{{Name: "runc", Features: &corev1.NodeRuntimeHandlerFeatures{RecursiveReadOnlyMounts: ptr(true), UserNamespaces: ptr(false)}}},
		},
	}
}

func objects() map[string]runtime.Object {
	return map[string]runtime.Object{
		"pod":  pod(),
		"node": node(),
		"lease": &coordinationv1.Lease{TypeMeta: tm("Lease", "coordination.k8s.io/v1"), ObjectMeta: meta("n1", "kube-node-lease"),
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("n1"), LeaseDurationSeconds: ptr(int32(40)), RenewTime: &renewed, AcquireTime: nil}},
		"configmap": &corev1.ConfigMap{TypeMeta: tm("ConfigMap", "v1"), ObjectMeta: meta("cfg", "shop"),
			Data: map[string]string{"a": "1", "empty": ""}, BinaryData: map[string][]byte{"bin": {0, 1, 2, 255}}, Immutable: ptr(false)},
		"secret": &corev1.Secret{TypeMeta: tm("Secret", "v1"), ObjectMeta: meta("locked", "shop"),
			Data: map[string][]byte{"pw": []byte("hunter2")}, Type: corev1.SecretTypeOpaque},
		"csr": &certificatesv1.CertificateSigningRequest{TypeMeta: tm("CertificateSigningRequest", "certificates.k8s.io/v1"), ObjectMeta: meta("csr-1", ""),
			Spec: certificatesv1.CertificateSigningRequestSpec{
				Request: []byte("-----BEGIN CERTIFICATE REQUEST-----\nMII\n-----END CERTIFICATE REQUEST-----\n"), SignerName: "kubernetes.io/kube-apiserver-client-kubelet",
				ExpirationSeconds: ptr(int32(86400)), Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
				Username: "system:node:n1", Groups: []string{"system:nodes"}, Extra: map[string]certificatesv1.ExtraValue{"scopes": {"a", "b"}},
			},
			Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AutoApproved", LastUpdateTime: created}}, Certificate: []byte("cert")},
		},
		"event": &corev1.Event{TypeMeta: tm("Event", "v1"), ObjectMeta: meta("web-0.1", "shop"),
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web-0", UID: "u", APIVersion: "v1", FieldPath: "spec.containers{app}"},
			Reason:         "Pulled", Message: "Container image already present", Source: corev1.EventSource{Component: "kubelet", Host: "n1"},
			FirstTimestamp: created, LastTimestamp: created, Count: 1, Type: corev1.EventTypeNormal, ReportingController: "kubelet", ReportingInstance: "n1"},
		"resourceclaim": &resourcev1.ResourceClaim{TypeMeta: tm("ResourceClaim", "resource.k8s.io/v1"), ObjectMeta: meta("gpu", "shop"),
			Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
				Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1}}},
				Config:   []resourcev1.DeviceClaimConfiguration{{Requests: []string{"gpu"}, DeviceConfiguration: resourcev1.DeviceConfiguration{Opaque: &resourcev1.OpaqueDeviceConfiguration{Driver: "gpu.example.com", Parameters: runtime.RawExtension{Raw: []byte(`{"kind":"GpuConfig","sharing":{"strategy":"TimeSlicing"}}`)}}}}},
			}},
			Status: resourcev1.ResourceClaimStatus{
				Allocation:  &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Driver: "gpu.example.com", Pool: "n1", Device: "gpu-0"}}}},
				ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "web-0", UID: "u"}},
			},
		},
		"csinode": &storagev1.CSINode{TypeMeta: tm("CSINode", "storage.k8s.io/v1"), ObjectMeta: meta("n1", ""),
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "csi.example.com", NodeID: "n1", TopologyKeys: nil, Allocatable: &storagev1.VolumeNodeResources{Count: ptr(int32(8))}}}}},
		"tokenrequest": &authenticationv1.TokenRequest{TypeMeta: tm("TokenRequest", "authentication.k8s.io/v1"), ObjectMeta: meta("default", "shop"),
			Spec:   authenticationv1.TokenRequestSpec{Audiences: []string{"api"}, ExpirationSeconds: ptr(int64(3607)), BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web-0", UID: "u"}},
			Status: authenticationv1.TokenRequestStatus{Token: "eyJ", ExpirationTimestamp: created}},
		"podlist": &corev1.PodList{TypeMeta: tm("PodList", "v1"), ListMeta: metav1.ListMeta{ResourceVersion: "4243", Continue: "c2"},
			Items: []corev1.Pod{func() corev1.Pod { p := pod(); p.TypeMeta = metav1.TypeMeta{}; return *p }(), {ObjectMeta: metav1.ObjectMeta{Name: "bare"}}}},
		"status": &metav1.Status{TypeMeta: tm("Status", "v1"), Status: metav1.StatusFailure, Message: `pods "x" not found`, Reason: metav1.StatusReasonNotFound,
			Details: &metav1.StatusDetails{Name: "x", Kind: "pods"}, Code: 404},
	}
}

// Each object as the apiserver writes it in both forms: <name>.pb (protobuf) and <name>.json; a
// watch of Pod events as watch.pb (protobuf frames) and watch.json (the JSON stream's events).
func writeFixtures(dir string) error {
	s := newScheme()
	metav1.AddToGroupVersion(s, metav1.SchemeGroupVersion)
	pb := protoserializer.NewSerializer(s, s)
	js := jsonserializer.NewSerializerWithOptions(jsonserializer.DefaultMetaFactory, s, s, jsonserializer.SerializerOptions{})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, obj := range objects() {
		var p, j bytes.Buffer
		if err := pb.Encode(obj, &p); err != nil {
			return err
		}
		if err := js.Encode(obj, &j); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".pb"), p.Bytes(), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".json"), j.Bytes(), 0o644); err != nil {
			return err
		}
	}
	// As the apiserver's watch handler: each object in the negotiated (enveloped) encoding as the
	// event's raw object, the event itself through the stream serializer (the raw one: no envelope)
	// in length-delimited frames.
	modified := pod()
	modified.ResourceVersion = "4250"
	modified.Status.Phase = corev1.PodSucceeded
	bookmark := &corev1.Pod{TypeMeta: tm("Pod", "v1"), ObjectMeta: metav1.ObjectMeta{ResourceVersion: "4300", Annotations: map[string]string{"k8s.io/initial-events-end": "true"}}}
	events := []struct {
		typ string
		obj runtime.Object
	}{{"ADDED", pod()}, {"MODIFIED", modified}, {"BOOKMARK", bookmark}, {"DELETED", modified}}
	var frames bytes.Buffer
	enc := streaming.NewEncoder(protoserializer.LengthDelimitedFramer.NewFrameWriter(&frames), protoserializer.NewRawSerializer(s, s))
	var lines []json.RawMessage
	for _, e := range events {
		var raw, j bytes.Buffer
		if err := pb.Encode(e.obj, &raw); err != nil {
			return err
		}
		if err := enc.Encode(&metav1.WatchEvent{Type: e.typ, Object: runtime.RawExtension{Raw: raw.Bytes()}}); err != nil {
			return err
		}
		if err := js.Encode(e.obj, &j); err != nil {
			return err
		}
		line, _ := json.Marshal(map[string]any{"type": e.typ, "object": json.RawMessage(j.Bytes())})
		lines = append(lines, line)
	}
	if err := os.WriteFile(filepath.Join(dir, "watch.pb"), frames.Bytes(), 0o644); err != nil {
		return err
	}
	all, _ := json.MarshalIndent(lines, "", " ")
	return os.WriteFile(filepath.Join(dir, "watch.json"), all, 0o644)
}
