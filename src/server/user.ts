// Who made a request, as upstream's user.Info: what authentication finds and what the
// SubjectAccessReview asks about.
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

const ALL_AUTHENTICATED = 'system:authenticated';
const ALL_UNAUTHENTICATED = 'system:unauthenticated';
export const anonymousUser: UserInfo = { name: 'system:anonymous', groups: [ALL_UNAUTHENTICATED] };

/** Upstream's AuthenticatedGroupAdder: every authenticated user is in system:authenticated. */
export function withAuthenticatedGroup(u: UserInfo): UserInfo {
  if (u.groups.includes(ALL_AUTHENTICATED) || u.groups.includes(ALL_UNAUTHENTICATED)) return u;
  return { ...u, groups: [...u.groups, ALL_AUTHENTICATED] };
}
