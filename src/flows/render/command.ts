// `/render`: render the templates the pull request changed into their committed outputs
// (the flow: ./flow.ts). Who may ask is decided on the edit itself.
import { renderFromComment } from './flow.js';
import { defineCommentCommand, plain } from '../../handlers/commands/command.js';

export const render = defineCommentCommand({
  name: 'render',
  costly: true,
  help: {
    line: '`/render` renders the templates and pushes the result to the pull request',
    rows: [
      {
        usage: '`/render`',
        who: 'the owners of what it changes, maintainers',
        what: "renders the templates the pull request changed into their committed outputs (the opm behaviour that made each output, bundles from the outputs or pulled from their images) and commits the result like `/promote`; the pull request's checks then judge it",
      },
    ],
  },
  parse: (args, _typed, at) => plain('render', args, at),
  mayUse: async () => undefined,
  act: (run) =>
    renderFromComment(run.context, run.options, run.target, run.pr, run.options.bundles?.resolveBundle),
});
