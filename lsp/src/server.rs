//! The protocol layer: each notification and request becomes a command for
//! the state thread; results come back on oneshot channels, diagnostics
//! and log messages through the publisher task.

use crate::ide;
use crate::state::{self, guard, Command, Failure, Job, Outgoing};
use crate::tokens;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc::UnboundedReceiver;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

pub struct Backend {
    client: Client,
    commands: Mutex<Sender<Command>>,
    shutdown: Arc<AtomicBool>,
    /// The client can watch files for us (dynamic registration).
    watch_files: AtomicBool,
}

impl Backend {
    /// Starts the state thread and the publisher task (call inside the
    /// tokio runtime).
    pub fn new(client: Client, shutdown: Arc<AtomicBool>) -> Backend {
        let (tx, rx) = std::sync::mpsc::channel();
        let (out_tx, out_rx) = tokio::sync::mpsc::unbounded_channel();
        state::start(rx, tx.clone(), out_tx);
        tokio::spawn(publish(client.clone(), out_rx));
        Backend { client, commands: Mutex::new(tx), shutdown, watch_files: AtomicBool::new(false) }
    }

    fn send(&self, cmd: Command) -> bool {
        match self.commands.lock() {
            Ok(tx) => tx.send(cmd).is_ok(),
            Err(_) => false,
        }
    }

    /// A malformed request (see `transport`): an error answer.
    pub async fn invalid_request(&self, params: serde_json::Value) -> Result<()> {
        let error = params.get("error").and_then(|e| e.as_str()).unwrap_or("invalid request").to_string();
        self.client.log_message(MessageType::ERROR, &error).await;
        let mut e = Error::invalid_request();
        e.message = error.into();
        Err(e)
    }

    /// A request for a `$/` method (see `transport`): none is implemented.
    pub async fn unknown_request(&self, params: serde_json::Value) -> Result<()> {
        let method = params.get("method").and_then(|m| m.as_str()).unwrap_or("?");
        let mut e = Error::method_not_found();
        e.message = format!("the request `{method}` is not implemented").into();
        Err(e)
    }

    /// A malformed message without an id: logged.
    pub async fn invalid_message(&self, params: serde_json::Value) {
        let error = params.get("error").and_then(|e| e.as_str()).unwrap_or("invalid message").to_string();
        self.client.log_message(MessageType::ERROR, error).await;
    }

    /// Semantic tokens of a document (or a range of it), from the syntax
    /// tree the driver keeps for the document's current text (parsed again
    /// only if another thread has since kept an older one).
    async fn semantic_tokens(&self, uri: Uri, range: Option<Range>) -> Result<Option<Vec<SemanticToken>>> {
        self.request("semanticTokens", move |s| {
            let file = s.file(&uri)?;
            let text = crate::convert::Text::of(&s.db, file);
            let kept = pmx_driver::current_parse(&s.db, file);
            let tree = match kept.as_ref().and_then(|p| p.tree_of(&text.text)) {
                Some(tree) => tree.clone(),
                None => pmx_syntax::parse_tree(&text.text)?,
            };
            let bytes = range.map(|r| {
                let (a, b) = (text.offset(r.start) as usize, text.offset(r.end) as usize);
                a.min(b)..a.max(b)
            });
            Some(tokens::semantic_tokens(&text.text, &tree, bytes))
        })
        .await
    }

    /// Runs `f` on a snapshot taken after every edit received so far.
    async fn request<R: Send + 'static>(
        &self,
        what: &str,
        f: impl FnOnce(&ide::Snapshot) -> R + Send + 'static,
    ) -> Result<R> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |snap| {
            let _ = tx.send(guard(|| f(snap)));
        });
        if !self.send(Command::Request(job)) {
            return Err(Error::internal_error());
        }
        match rx.await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(Failure::Cancelled)) => Err(Error::content_modified()),
            Ok(Err(Failure::Panic(msg))) => {
                self.client.log_message(MessageType::ERROR, format!("internal error in {what}: {msg}")).await;
                Err(Error::internal_error())
            }
            Err(_) => Err(Error::internal_error()),
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.send(Command::Stop);
    }
}

/// Sends diagnostics and log messages in the order they were produced;
/// publishes a file's diagnostics only when they or its version changed,
/// and clears those of files that no longer have any.
async fn publish(client: Client, mut rx: UnboundedReceiver<Outgoing>) {
    let mut last: HashMap<Uri, (Vec<Diagnostic>, Option<i32>)> = HashMap::new();
    while let Some(msg) = rx.recv().await {
        match msg {
            Outgoing::Log(typ, text) => client.log_message(typ, text).await,
            Outgoing::Diagnostics(set) => {
                let mut next = HashMap::new();
                for (uri, diags, version) in set {
                    let entry = (diags, version);
                    if last.get(&uri) != Some(&entry) {
                        client.publish_diagnostics(uri.clone(), entry.0.clone(), version).await;
                    }
                    next.insert(uri, entry);
                }
                for (uri, (diags, _)) in last.drain() {
                    if !next.contains_key(&uri) && !diags.is_empty() {
                        client.publish_diagnostics(uri, Vec::new(), None).await;
                    }
                }
                last = next;
            }
        }
    }
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            ..Default::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions::default()),
        semantic_tokens_provider: Some(
            SemanticTokensOptions {
                legend: tokens::legend(),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: Some(true),
                ..Default::default()
            }
            .into(),
        ),
        ..Default::default()
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, p: InitializeParams) -> Result<InitializeResult> {
        let watch = p
            .capabilities
            .workspace
            .and_then(|w| w.did_change_watched_files)
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false);
        self.watch_files.store(watch, Ordering::SeqCst);
        Ok(InitializeResult {
            capabilities: capabilities(),
            server_info: Some(ServerInfo {
                name: "pmx".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.client.log_message(MessageType::INFO, "pmx language server ready").await;
        if self.watch_files.load(Ordering::SeqCst) {
            // Files changed outside the editor (an included file saved by
            // another program) are read again.
            let options = DidChangeWatchedFilesRegistrationOptions {
                watchers: vec![FileSystemWatcher { glob_pattern: GlobPattern::String("**/*.mc".into()), kind: None }],
            };
            let registration = Registration {
                id: "pmx-watch-mc".into(),
                method: "workspace/didChangeWatchedFiles".into(),
                register_options: serde_json::to_value(options).ok(),
            };
            if let Err(e) = self.client.register_capability(vec![registration]).await {
                self.client.log_message(MessageType::WARNING, format!("cannot watch .mc files: {e}")).await;
            }
        }
    }

    async fn shutdown(&self) -> Result<()> {
        self.shutdown.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, p: DidOpenTextDocumentParams) {
        let d = p.text_document;
        self.send(Command::Open { uri: d.uri, text: d.text, version: d.version });
    }

    async fn did_change(&self, p: DidChangeTextDocumentParams) {
        let d = p.text_document;
        self.send(Command::Change { uri: d.uri, version: d.version, changes: p.content_changes });
    }

    async fn did_close(&self, p: DidCloseTextDocumentParams) {
        self.send(Command::Close { uri: p.text_document.uri });
    }

    async fn did_change_watched_files(&self, p: DidChangeWatchedFilesParams) {
        self.send(Command::Watched(p.changes));
    }

    async fn hover(&self, p: HoverParams) -> Result<Option<Hover>> {
        let at = p.text_document_position_params;
        self.request("hover", move |s| ide::hover(s, &at.text_document.uri, at.position)).await
    }

    async fn goto_definition(&self, p: GotoDefinitionParams) -> Result<Option<GotoDefinitionResponse>> {
        let at = p.text_document_position_params;
        let found = self.request("definition", move |s| ide::definition(s, &at.text_document.uri, at.position)).await?;
        Ok(found.map(GotoDefinitionResponse::Array))
    }

    async fn references(&self, p: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let at = p.text_document_position;
        let decl = p.context.include_declaration;
        self.request("references", move |s| ide::references(s, &at.text_document.uri, at.position, decl)).await
    }

    async fn document_symbol(&self, p: DocumentSymbolParams) -> Result<Option<DocumentSymbolResponse>> {
        let uri = p.text_document.uri;
        let found = self.request("documentSymbol", move |s| ide::document_symbols(s, &uri)).await?;
        Ok(found.map(DocumentSymbolResponse::Nested))
    }

    async fn completion(&self, p: CompletionParams) -> Result<Option<CompletionResponse>> {
        let at = p.text_document_position;
        let found = self.request("completion", move |s| ide::completion(s, &at.text_document.uri, at.position)).await?;
        Ok(found.map(CompletionResponse::Array))
    }

    async fn semantic_tokens_full(&self, p: SemanticTokensParams) -> Result<Option<SemanticTokensResult>> {
        let data = self.semantic_tokens(p.text_document.uri, None).await?;
        Ok(data.map(|data| SemanticTokensResult::Tokens(SemanticTokens { result_id: None, data })))
    }

    async fn semantic_tokens_range(&self, p: SemanticTokensRangeParams) -> Result<Option<SemanticTokensRangeResult>> {
        let data = self.semantic_tokens(p.text_document.uri, Some(p.range)).await?;
        Ok(data.map(|data| SemanticTokensRangeResult::Tokens(SemanticTokens { result_id: None, data })))
    }
}
