// Where the pages of a repository come from, asked of GitHub (docs/site.md, "Served by the
// App"): the App's installation on it, then as that installation whether it is private,
// its default branch and that branch's commit, and a token for the mirror.
import type { GitHubApp } from '../../github/adapter.js';
import type { PagesRepository } from './routes.js';

export function pagesRepository(
  app: Pick<GitHubApp, 'installationOn' | 'as'>,
): (owner: string, repo: string) => Promise<PagesRepository | undefined> {
  return async (owner, repo) => {
    const ref = { owner, repo };
    const installation = await app.installationOn(ref);
    if (installation === undefined) return undefined;
    const github = await app.as(installation);
    const repository = await github.repos.get(ref);
    // Only what GitHub calls public is public (internal repositories are not).
    const isPublic = repository.private === false && (repository.visibility ?? 'public') === 'public';
    if (!isPublic) return { repoId: repository.id, private: true, cloneUrl: '', defaultBranch: '', sha: '' };
    const branch = await github.repos.branch(ref, repository.default_branch);
    return {
      repoId: repository.id,
      private: false,
      cloneUrl: repository.clone_url,
      defaultBranch: repository.default_branch,
      sha: branch.commit.sha,
      token: await github.installation.token(),
    };
  };
}
