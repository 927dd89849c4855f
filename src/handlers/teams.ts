// `org/team` maintainers resolved through the GitHub API, cached for a few minutes per
// installation so that a burst of pull requests asks once.
import type { GitHub } from '../github/port.js';
import type { TeamMembers } from '../checks/permissions.js';

const TTL_MS = 5 * 60 * 1000;
const cache = new Map<string, { at: number; members: Promise<string[]> }>();

export function teamMembers(github: GitHub, installationId: number | undefined): TeamMembers {
  return (orgTeam) => {
    const key = `${installationId ?? '-'}:${orgTeam.toLowerCase()}`;
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.members;
    const [org, team_slug] = orgTeam.split('/') as [string, string];
    const members = github.permissions.teamMembers(org, team_slug);
    members.catch(() => cache.delete(key)); // a failure is not remembered
    cache.set(key, { at: Date.now(), members });
    return members;
  };
}
