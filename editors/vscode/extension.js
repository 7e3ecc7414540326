// A client only: starts `pmx lsp` and lets vscode-languageclient speak the
// Language Server Protocol with it over stdio.
'use strict';

const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration('pmx');
  const command = config.get('server.path') || 'pmx';
  const env = Object.assign({}, process.env, config.get('server.env') || {});
  const run = { command, args: ['lsp'], transport: TransportKind.stdio, options: { env } };
  const serverOptions = { run, debug: run };
  const clientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'mexpr' },
      { scheme: 'untitled', language: 'mexpr' },
    ],
    synchronize: {
      // Included files edited outside the editor are re-read.
      fileEvents: vscode.workspace.createFileSystemWatcher('**/*.mc'),
    },
  };
  client = new LanguageClient('pmx', 'pmx language server', serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.commands.registerCommand('pmx.restartServer', () => client.restart()),
  );
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
