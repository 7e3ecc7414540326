//! Run-time errors: a message, where, and the calls that led there.

use pmx_ast::{SmolStr, Span};

/// The number of calls shown in a trace.
pub const TRACE_LIMIT: usize = 12;

#[derive(Clone, Debug)]
pub struct RuntimeError {
    pub message: String,
    pub span: Span,
    /// Functions being called, most recent first: name and call site.
    pub trace: Vec<(SmolStr, Span)>,
    /// Calls left out of the trace.
    pub omitted: usize,
    /// `exit n` unwinds as an error that is not one.
    pub exit: Option<i32>,
}

pub type Fail = Box<RuntimeError>;
pub type Res<T> = Result<T, Fail>;

impl RuntimeError {
    /// Records a call the error unwinds through (innermost first): the
    /// function's name and its call site.
    #[cold]
    pub fn add_call(&mut self, name: &SmolStr, site: Span) {
        if self.trace.len() < TRACE_LIMIT {
            self.trace.push((name.clone(), site));
        } else {
            self.omitted += 1;
        }
    }
}
