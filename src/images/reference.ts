// Whether an image name is a valid reference in the distribution grammar
// (docker/distribution reference: [domain[:port]/]path[:tag][@digest]), which the
// upstream kubelet checks before any pull and answers with InvalidImageName.
const domainPart = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const domain = `(?:${domainPart}(?:\\.${domainPart})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const pathPart = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const name = `(?:${domain}/)?${pathPart}(?:/${pathPart})*`;
const tag = '[\\w][\\w.-]{0,127}';
const digest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const reference = new RegExp(`^(${name})(?::${tag})?(?:@${digest})?$`);

/** Pure: undefined when valid, else why not (as `crictl`/containerd word it). */
export function invalidReference(image: string): string | undefined {
  const m = reference.exec(image);
  if (!m) return 'invalid reference format';
  if (m[1]!.length > 255) return 'repository name must not be more than 255 characters';
  return undefined;
}
