// The in-memory runtime's state machines, as containerd's CRI plugin behaves for each call: what
// a container or sandbox becomes, or the error the call fails with. Pure, so the table test reads
// as the runtime's contract.

export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED';
export type SandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';

/** What happens to a container: the kubelet's calls, and its own exit. */
export type ContainerOp = 'start' | 'exit' | 'stop' | 'remove';

/** The state a container goes to, 'gone' once removed, or the refusal (gRPC FAILED_PRECONDITION in the server). */
export type Transition<S> = { to: S | 'gone' } | { refused: string };

/**
 * Pure: containerd's rules. Only a created container starts (an exited one is never restarted: the
 * kubelet makes a new one); stopping one that is not running changes nothing; removing a running
 * one kills it first (containerd's RemoveContainer forces); an exit only ends a running one.
 */
export function containerTransition(state: ContainerState, op: ContainerOp): Transition<ContainerState> {
  switch (op) {
    case 'start':
      return state === 'CONTAINER_CREATED' ? { to: 'CONTAINER_RUNNING' } : { refused: `container is in ${state} state` };
    case 'exit':
    case 'stop':
      return { to: state === 'CONTAINER_RUNNING' ? 'CONTAINER_EXITED' : state };
    case 'remove':
      return { to: 'gone' };
  }
}

/** What happens to a sandbox. */
export type SandboxOp = 'createContainer' | 'stop' | 'remove';

/**
 * Pure: a sandbox takes containers only while ready; stopping is idempotent (and stops its
 * containers, which the store does); removing one stops it first and removes its containers
 * (CRI's RemovePodSandbox: "forcibly terminated and removed").
 */
export function sandboxTransition(state: SandboxState, op: SandboxOp): Transition<SandboxState> {
  switch (op) {
    case 'createContainer':
      return state === 'SANDBOX_READY' ? { to: state } : { refused: 'sandbox is not ready' };
    case 'stop':
      return { to: 'SANDBOX_NOTREADY' };
    case 'remove':
      return { to: 'gone' };
  }
}

/** Pure: the reason containerd gives an exited container: "Completed" for 0, else "Error". */
export const exitReason = (exitCode: number): string => (exitCode === 0 ? 'Completed' : 'Error');
