// The GitHub port (port.ts) on Probot's installation client. Everything the App does with
// Octokit happens here or in its siblings: the client's write pacing and rate-limit waits
// (client.ts), conditional requests (conditional-requests.ts), the installation token
// (below). docs/architecture.md, "The GitHub port".
import type { Probot } from 'probot';
import { useConditionalRequests, type ConditionalCache } from './conditional-requests.js';
import type { GitHub } from './port.js';
import type { Octokit } from './types.js';

/** The port for one installation's client. */
export function octokitGitHub(octokit: Octokit): GitHub {
  return {
    pulls: pullRequests(octokit),
    checks: checkRuns(octokit),
    comments: issueComments(octokit),
    labels: issueLabels(octokit),
    git: gitData(octokit),
    repos: repositories(octokit),
    permissions: permissions(octokit),
    mergeQueue: mergeQueue(octokit),
    installation: installation(octokit),
  };
}

/** The pull requests of a repository. */
function pullRequests(octokit: Octokit): GitHub['pulls'] {
  return {
    get: async (ref, number) => (await octokit.rest.pulls.get({ ...ref, pull_number: number })).data,
    getAt: async (ref, number) => {
      const response = await octokit.rest.pulls.get({ ...ref, pull_number: number });
      const date = response.headers.date;
      return { pull: response.data, at: date === undefined ? undefined : String(date) };
    },
    list: (ref, query, limit) => {
      let seen = 0;
      return octokit
        .paginate(octokit.rest.pulls.list, { ...ref, ...query, per_page: 100 }, (response, done) => {
          seen += response.data.length;
          if (limit !== undefined && seen >= limit) done();
          return response.data;
        })
        .then((list) => (limit === undefined ? list : list.slice(0, limit)));
    },
    files: (ref, number) =>
      octokit.paginate(octokit.rest.pulls.listFiles, { ...ref, pull_number: number, per_page: 100 }),
    ofCommit: async (ref, sha) =>
      (
        await octokit.rest.repos.listPullRequestsAssociatedWithCommit({
          ...ref,
          commit_sha: sha,
          per_page: 100,
        })
      ).data,
    create: async (ref, pull) => {
      const { data } = await octokit.rest.pulls.create({ ...ref, ...pull });
      return { number: data.number, html_url: data.html_url };
    },
    merge: async (ref, number, merge) => {
      const { data } = await octokit.rest.pulls.merge({ ...ref, pull_number: number, ...merge });
      return { sha: data.sha, merged: data.merged };
    },
  };
}

/** Check runs on commits. */
function checkRuns(octokit: Octokit): GitHub['checks'] {
  return {
    onCommit: (ref, sha, query = {}) =>
      octokit.paginate(octokit.rest.checks.listForRef, { ...ref, ref: sha, ...query, per_page: 100 }),
    create: async (ref, run) => ({
      id: (await octokit.rest.checks.create({ ...ref, ...run } as never)).data.id,
    }),
    update: async (ref, id, run) => {
      await octokit.rest.checks.update({ ...ref, check_run_id: id, ...run } as never);
    },
  };
}

/** Comments on issues and pull requests, and reactions to them. */
function issueComments(octokit: Octokit): GitHub['comments'] {
  return {
    list: (ref, issue) =>
      octokit.paginate(octokit.rest.issues.listComments, { ...ref, issue_number: issue, per_page: 100 }),
    create: async (ref, issue, body) => ({
      id: (await octokit.rest.issues.createComment({ ...ref, issue_number: issue, body })).data.id,
    }),
    update: async (ref, id, body) => {
      await octokit.rest.issues.updateComment({ ...ref, comment_id: id, body });
    },
    react: async (ref, commentId, content) => {
      await octokit.rest.reactions.createForIssueComment({ ...ref, comment_id: commentId, content });
    },
    timeline: (ref, issue) =>
      octokit.paginate(octokit.rest.issues.listEventsForTimeline, {
        ...ref,
        issue_number: issue,
        per_page: 100,
      }),
  };
}

/** Labels of issues and pull requests. */
function issueLabels(octokit: Octokit): GitHub['labels'] {
  return {
    add: async (ref, issue, labels) => {
      await octokit.rest.issues.addLabels({ ...ref, issue_number: issue, labels });
    },
    remove: async (ref, issue, label) => {
      await octokit.rest.issues
        .removeLabel({ ...ref, issue_number: issue, name: label })
        .catch((e: unknown) => {
          if ((e as { status?: number }).status !== 404) throw e; // already gone
        });
    },
  };
}

/** Git data: trees, commits and branches written through the API. */
function gitData(octokit: Octokit): GitHub['git'] {
  return {
    createTree: async (ref, tree) => ({
      sha: (await octokit.rest.git.createTree({ ...ref, ...tree })).data.sha,
    }),
    createCommit: async (ref, commit) => ({
      sha: (await octokit.rest.git.createCommit({ ...ref, ...commit })).data.sha,
    }),
    createBranch: async (ref, branch, sha) => {
      await octokit.rest.git.createRef({ ...ref, ref: `refs/heads/${branch}`, sha });
    },
    moveBranch: async (ref, branch, sha, force) => {
      await octokit.rest.git.updateRef({ ...ref, ref: `heads/${branch}`, sha, force });
    },
  };
}

/** A repository: its settings, branches, files, commits and dispatches. */
function repositories(octokit: Octokit): GitHub['repos'] {
  return {
    get: async (ref) => (await octokit.rest.repos.get({ ...ref })).data,
    branch: async (ref, name) => (await octokit.rest.repos.getBranch({ ...ref, branch: name })).data,
    findBranch: (ref, name) =>
      octokit.rest.repos.getBranch({ ...ref, branch: name }).then(
        ({ data }) => data,
        (e: unknown) => {
          if ((e as { status?: number }).status === 404) return undefined;
          throw e;
        },
      ),
    branchRules: async (ref, name) =>
      (await octokit.rest.repos.getBranchRules({ ...ref, branch: name, per_page: 100 })).data,
    fileText: (ref, path, at) =>
      octokit.rest.repos.getContent({ ...ref, path, ref: at }).then(
        ({ data }) =>
          'content' in data && typeof data.content === 'string'
            ? Buffer.from(data.content, 'base64').toString('utf8')
            : undefined,
        (e: unknown) => {
          if ((e as { status?: number }).status === 404) return undefined;
          throw e;
        },
      ),
    commits: async (ref, query, limit) =>
      (await octokit.rest.repos.listCommits({ ...ref, ...query, per_page: limit })).data,
    compare: async (ref, base, head) =>
      (
        await octokit.rest.repos.compareCommitsWithBasehead({
          ...ref,
          basehead: `${base}...${head}`,
          per_page: 300,
        })
      ).data,
    dispatch: async (ref, eventType, payload) => {
      await octokit.rest.repos.createDispatchEvent({
        ...ref,
        event_type: eventType,
        client_payload: payload,
      });
    },
    dispatchWorkflow: async (ref, workflow, branch, inputs) => {
      await octokit.rest.actions.createWorkflowDispatch({
        ...ref,
        workflow_id: workflow,
        ref: branch,
        inputs,
      });
    },
  };
}

/** Who may do what: collaborators and team members. */
function permissions(octokit: Octokit): GitHub['permissions'] {
  return {
    ofCollaborator: async (ref, login) =>
      (await octokit.rest.repos.getCollaboratorPermissionLevel({ ...ref, username: login })).data.permission,
    teamMembers: async (org, team) =>
      (
        await octokit.paginate(octokit.rest.teams.listMembersInOrg, { org, team_slug: team, per_page: 100 })
      ).map((m) => m.login),
  };
}

/** The merge queue (GraphQL: REST has no merge queue). */
function mergeQueue(octokit: Octokit): GitHub['mergeQueue'] {
  return {
    isQueued: async (pullRequestId) => {
      const data = await octokit.graphql<{ node: { isInMergeQueue?: boolean } | null }>(
        `query($pullRequestId: ID!) { node(id: $pullRequestId) { ... on PullRequest { isInMergeQueue } } }`,
        { pullRequestId },
      );
      return data.node?.isInMergeQueue === true;
    },
    enqueue: async (pullRequestId, expectedHeadOid) => {
      await octokit.graphql(
        `mutation($pullRequestId: ID!, $expectedHeadOid: GitObjectID) {
          enqueuePullRequest(input: { pullRequestId: $pullRequestId, expectedHeadOid: $expectedHeadOid }) {
            mergeQueueEntry { id }
          }
        }`,
        { pullRequestId, expectedHeadOid },
      );
    },
    dequeue: async (pullRequestId) => {
      await octokit.graphql(
        `mutation($pullRequestId: ID!) {
          dequeuePullRequest(input: { id: $pullRequestId }) { mergeQueueEntry { id } }
        }`,
        { pullRequestId },
      );
    },
  };
}

/** The installation: its token and repositories. */
function installation(octokit: Octokit): GitHub['installation'] {
  return {
    token: () => installationToken(octokit),
    repositories: () =>
      octokit.paginate(octokit.rest.apps.listReposAccessibleToInstallation, { per_page: 100 }),
  };
}

/** An installation access token for git over HTTPS. */
async function installationToken(octokit: Octokit): Promise<string> {
  // Probot gives the App's auth strategy no base URL, so asking it for the token before any
  // request would ask api.github.com even on GitHub Enterprise Server; a read through the
  // client (its auth hook knows the base URL) gets the token first, and auth() reuses it.
  if (octokit.request.endpoint.DEFAULTS.baseUrl !== 'https://api.github.com')
    await octokit.request('GET /installation/repositories', { per_page: 1 });
  const { token } = (await octokit.auth({ type: 'installation' })) as { token: string };
  return token;
}

/**
 * The App's own view of GitHub (app-level authentication) and the port as each of its
 * installations. An installation's GETs are conditional requests answered from `cache`
 * when GitHub says nothing changed (conditional-requests.ts).
 */
export interface GitHubApp {
  /** The App's slug: its bot user is `<slug>[bot]`. */
  slug(): Promise<string>;
  installations(): Promise<{ id: number }[]>;
  /** The installation on a repository; undefined when the App is not installed there. */
  installationOn(ref: { owner: string; repo: string }): Promise<number | undefined>;
  as(installationId: number | undefined): Promise<GitHub>;
}

export function probotGitHubApp(app: Probot, cache?: ConditionalCache): GitHubApp {
  return {
    slug: async () => {
      const octokit = await app.auth();
      const { data } = await octokit.rest.apps.getAuthenticated();
      return data?.slug ?? '';
    },
    installations: async () => {
      const octokit = await app.auth();
      return octokit.paginate(octokit.rest.apps.listInstallations, { per_page: 100 });
    },
    installationOn: async (ref) => {
      const octokit = await app.auth();
      try {
        return (await octokit.rest.apps.getRepoInstallation(ref)).data.id;
      } catch (error) {
        if ((error as { status?: number }).status === 404) return undefined;
        throw error;
      }
    },
    as: async (installationId) => {
      const octokit = await app.auth(installationId);
      if (cache) useConditionalRequests(octokit, cache, String(installationId));
      return octokitGitHub(octokit);
    },
  };
}
