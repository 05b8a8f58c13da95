// Label values computed as upstream computes them, so that series match the upstream
// kubelet's: pure functions over plain values.
import { goCodeName } from '../cri/error.ts';

// Reasons recorded as themselves in kubelet_admission_rejections_total (upstream's allowlist,
// pkg/kubelet/kubelet.go admissionRejectionReasons); others are folded to keep the label small.
const ADMISSION_REJECTION_REASONS = new Set([
  'AppArmor',
  'PodOSSelectorNodeLabelDoesNotMatch',
  'PodOSNotSupported',
  'InvalidNodeInfo',
  'InitContainerRestartPolicyForbidden',
  'SupplementalGroupsPolicyNotSupported',
  'UnexpectedAdmissionError',
  'UnknownReason',
  'UnexpectedPredicateFailureType',
  'OutOfcpu',
  'OutOfmemory',
  'OutOfephemeral-storage',
  'OutOfpods',
  'PodLevelResourcesNotSupported',
  'PodFeatureUnsupported',
  "node(s) had taints that the pod didn't tolerate",
  'Evicted',
  'SysctlForbidden',
  'TopologyAffinityError',
  'NodeShutdown',
  'VolumeAttachmentLimitExceeded',
]);

/** The reason label of kubelet_admission_rejections_total for a rejection reason. */
export function admissionRejectionReason(reason: string): string {
  if (ADMISSION_REJECTION_REASONS.has(reason)) return reason;
  return reason.startsWith('OutOf') ? 'OutOfExtendedResources' : 'Other';
}

const MiB = 1024 * 1024,
  GiB = 1024 * MiB;
const IMAGE_SIZE_BUCKETS: [number, string][] = [
  [0, '0-10MB'],
  [10 * MiB, '10MB-100MB'],
  [100 * MiB, '100MB-500MB'],
  [500 * MiB, '500MB-1GB'],
  [GiB, '1GB-5GB'],
  [5 * GiB, '5GB-10GB'],
  [10 * GiB, '10GB-20GB'],
  [20 * GiB, '20GB-30GB'],
  [30 * GiB, '30GB-40GB'],
  [40 * GiB, '40GB-60GB'],
  [60 * GiB, '60GB-100GB'],
  [100 * GiB, 'GT100GB'],
];

/** The image_size_in_bytes label of kubelet_image_pull_duration_seconds ("N/A": size unknown). */
export function imageSizeBucket(bytes: number): string {
  if (!bytes) return 'N/A';
  for (let i = IMAGE_SIZE_BUCKETS.length - 1; i >= 0; i--) if (bytes > IMAGE_SIZE_BUCKETS[i]![0]) return IMAGE_SIZE_BUCKETS[i]![1];
  return '';
}

/** The code label of kubelet_started_containers_errors_total: the gRPC status of a failed CRI call, as Go names it. */
export function grpcCodeName(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  const name = typeof code === 'number' ? goCodeName(code) : '';
  return name && !name.startsWith('Code(') ? name : 'Unknown';
}
