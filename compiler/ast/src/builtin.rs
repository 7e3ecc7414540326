//! The built-in constants (Miking's intrinsics) and parallel keywords.
//!
//! One row per built-in: its name and its type, written in MExpr type
//! syntax (`a`, `b`, ... are implicitly quantified). The type checker parses
//! these strings once; the evaluator dispatches on [`Builtin`].

macro_rules! builtins {
    ($($variant:ident = $name:literal : $ty:literal;)*) => {
        /// A built-in constant or parallel keyword. User bindings may shadow
        /// every one of them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Builtin {
            $($variant,)*
        }

        impl Builtin {
            pub const ALL: &'static [Builtin] = &[$(Builtin::$variant,)*];

            /// The name a program uses for it.
            pub fn name(self) -> &'static str {
                match self {
                    $(Builtin::$variant => $name,)*
                }
            }

            /// Its type in MExpr syntax; lowercase names are quantified.
            pub fn type_signature(self) -> &'static str {
                match self {
                    $(Builtin::$variant => $ty,)*
                }
            }

            /// How many arguments it takes before it computes anything:
            /// the parameters of its signature (applied to fewer, it is a
            /// value).
            pub fn arity(self) -> usize {
                self.signature().params.len()
            }
        }
    };
}

builtins! {
    // Integer arithmetic, shifts and comparison.
    Addi = "addi" : "Int -> Int -> Int";
    Subi = "subi" : "Int -> Int -> Int";
    Muli = "muli" : "Int -> Int -> Int";
    Divi = "divi" : "Int -> Int -> Int";
    Modi = "modi" : "Int -> Int -> Int";
    Negi = "negi" : "Int -> Int";
    Slli = "slli" : "Int -> Int -> Int";
    Srli = "srli" : "Int -> Int -> Int";
    Srai = "srai" : "Int -> Int -> Int";
    Eqi = "eqi" : "Int -> Int -> Bool";
    Neqi = "neqi" : "Int -> Int -> Bool";
    Lti = "lti" : "Int -> Int -> Bool";
    Gti = "gti" : "Int -> Int -> Bool";
    Leqi = "leqi" : "Int -> Int -> Bool";
    Geqi = "geqi" : "Int -> Int -> Bool";
    // Floating-point arithmetic and comparison.
    Addf = "addf" : "Float -> Float -> Float";
    Subf = "subf" : "Float -> Float -> Float";
    Mulf = "mulf" : "Float -> Float -> Float";
    Divf = "divf" : "Float -> Float -> Float";
    Negf = "negf" : "Float -> Float";
    Eqf = "eqf" : "Float -> Float -> Bool";
    Neqf = "neqf" : "Float -> Float -> Bool";
    Ltf = "ltf" : "Float -> Float -> Bool";
    Gtf = "gtf" : "Float -> Float -> Bool";
    Leqf = "leqf" : "Float -> Float -> Bool";
    Geqf = "geqf" : "Float -> Float -> Bool";
    // Conversions.
    Int2float = "int2float" : "Int -> Float";
    Floorfi = "floorfi" : "Float -> Int";
    Ceilfi = "ceilfi" : "Float -> Int";
    Roundfi = "roundfi" : "Float -> Int";
    Char2int = "char2int" : "Char -> Int";
    Int2char = "int2char" : "Int -> Char";
    Eqc = "eqc" : "Char -> Char -> Bool";
    Float2string = "float2string" : "Float -> String";
    String2float = "string2float" : "String -> Float";
    StringIsFloat = "stringIsFloat" : "String -> Bool";
    // Sequences.
    Create = "create" : "Int -> (Int -> a) -> [a]";
    CreateList = "createList" : "Int -> (Int -> a) -> [a]";
    CreateRope = "createRope" : "Int -> (Int -> a) -> [a]";
    IsList = "isList" : "[a] -> Bool";
    IsRope = "isRope" : "[a] -> Bool";
    Length = "length" : "[a] -> Int";
    Concat = "concat" : "[a] -> [a] -> [a]";
    Get = "get" : "[a] -> Int -> a";
    Set = "set" : "[a] -> Int -> a -> [a]";
    Cons = "cons" : "a -> [a] -> [a]";
    Snoc = "snoc" : "[a] -> a -> [a]";
    SplitAt = "splitAt" : "[a] -> Int -> ([a], [a])";
    Reverse = "reverse" : "[a] -> [a]";
    Head = "head" : "[a] -> a";
    Tail = "tail" : "[a] -> [a]";
    Null = "null" : "[a] -> Bool";
    Map = "map" : "(a -> b) -> [a] -> [b]";
    Mapi = "mapi" : "(Int -> a -> b) -> [a] -> [b]";
    Iter = "iter" : "(a -> ()) -> [a] -> ()";
    Iteri = "iteri" : "(Int -> a -> ()) -> [a] -> ()";
    Foldl = "foldl" : "(a -> b -> a) -> a -> [b] -> a";
    Foldr = "foldr" : "(a -> b -> b) -> b -> [a] -> b";
    Subsequence = "subsequence" : "[a] -> Int -> Int -> [a]";
    // Tensors.
    TensorCreateUninitInt = "tensorCreateUninitInt" : "[Int] -> Tensor[Int]";
    TensorCreateUninitFloat = "tensorCreateUninitFloat" : "[Int] -> Tensor[Float]";
    TensorCreateCArrayInt = "tensorCreateCArrayInt" : "[Int] -> ([Int] -> Int) -> Tensor[Int]";
    TensorCreateCArrayFloat = "tensorCreateCArrayFloat" : "[Int] -> ([Int] -> Float) -> Tensor[Float]";
    TensorCreateDense = "tensorCreateDense" : "[Int] -> ([Int] -> a) -> Tensor[a]";
    TensorGetExn = "tensorGetExn" : "Tensor[a] -> [Int] -> a";
    TensorSetExn = "tensorSetExn" : "Tensor[a] -> [Int] -> a -> ()";
    TensorLinearGetExn = "tensorLinearGetExn" : "Tensor[a] -> Int -> a";
    TensorLinearSetExn = "tensorLinearSetExn" : "Tensor[a] -> Int -> a -> ()";
    TensorRank = "tensorRank" : "Tensor[a] -> Int";
    TensorShape = "tensorShape" : "Tensor[a] -> [Int]";
    TensorReshapeExn = "tensorReshapeExn" : "Tensor[a] -> [Int] -> Tensor[a]";
    TensorCopy = "tensorCopy" : "Tensor[a] -> Tensor[a]";
    TensorTransposeExn = "tensorTransposeExn" : "Tensor[a] -> Int -> Int -> Tensor[a]";
    TensorSliceExn = "tensorSliceExn" : "Tensor[a] -> [Int] -> Tensor[a]";
    TensorSubExn = "tensorSubExn" : "Tensor[a] -> Int -> Int -> Tensor[a]";
    TensorIterSlice = "tensorIterSlice" : "(Int -> Tensor[a] -> ()) -> Tensor[a] -> ()";
    TensorEq = "tensorEq" : "(a -> b -> Bool) -> Tensor[a] -> Tensor[b] -> Bool";
    Tensor2string = "tensor2string" : "(a -> String) -> Tensor[a] -> String";
    // Input and output.
    Print = "print" : "String -> ()";
    PrintError = "printError" : "String -> ()";
    Dprint = "dprint" : "a -> ()";
    FlushStdout = "flushStdout" : "() -> ()";
    FlushStderr = "flushStderr" : "() -> ()";
    ReadLine = "readLine" : "() -> String";
    ReadBytesAsString = "readBytesAsString" : "Int -> (String, String)";
    ReadFile = "readFile" : "String -> String";
    WriteFile = "writeFile" : "String -> String -> ()";
    FileExists = "fileExists" : "String -> Bool";
    DeleteFile = "deleteFile" : "String -> ()";
    Argv = "argv" : "[String]";
    Command = "command" : "String -> Int";
    Exit = "exit" : "Int -> a";
    Error = "error" : "String -> a";
    // Miscellaneous.
    RandIntU = "randIntU" : "Int -> Int -> Int";
    RandSetSeed = "randSetSeed" : "Int -> ()";
    WallTimeMs = "wallTimeMs" : "() -> Float";
    SleepMs = "sleepMs" : "Int -> ()";
    Ref = "ref" : "a -> Ref a";
    Deref = "deref" : "Ref a -> a";
    Modref = "modref" : "Ref a -> a -> ()";
    Eqsym = "eqsym" : "Symbol -> Symbol -> Bool";
    Gensym = "gensym" : "() -> Symbol";
    Sym2hash = "sym2hash" : "Symbol -> Int";
    ConstructorTag = "constructorTag" : "a -> Int";
    UnsafeCoerce = "unsafeCoerce" : "a -> b";
    // Derivatives: `a` and `b` must be differentiable types (Float, and
    // sequences, tuples and records of them; `pmx_types::differentiable`).
    Vjp = "vjp" : "(a -> b) -> a -> b -> a";
    Jvp = "jvp" : "(a -> b) -> a -> a -> b";
    Grad = "grad" : "(a -> Float) -> a -> a";
    // Parallel keywords (section 3 of the reference).
    Accelerate = "accelerate" : "a -> a";
    ParallelMap = "parallelMap" : "(a -> b) -> [a] -> [b]";
    Map2 = "map2" : "(a -> b -> c) -> [a] -> [b] -> [c]";
    Reduce = "reduce" : "(a -> a -> a) -> a -> [a] -> a";
    Flatten = "flatten" : "[[a]] -> [a]";
    Loop = "loop" : "Int -> (Int -> ()) -> ()";
    SeqLoop = "seqLoop" : "Int -> (Int -> ()) -> ()";
    SeqLoopAcc = "seqLoopAcc" : "a -> Int -> (a -> Int -> a) -> a";
    PrintFloat = "printFloat" : "Float -> ()";
}

impl Builtin {
    /// For the parallel keywords: the number of arguments they must be
    /// applied to (section 3 of the reference). `None` for ordinary
    /// built-ins, which may be partially applied.
    pub fn keyword_arity(self) -> Option<usize> {
        use Builtin::*;
        match self {
            Accelerate | Flatten | PrintFloat => Some(1),
            ParallelMap | Loop | SeqLoop => Some(2),
            Map2 | Reduce | SeqLoopAcc => Some(3),
            _ => None,
        }
    }

    /// Whether it is one of the tensor built-ins: the table's rows from
    /// `tensorCreateUninitInt` to `tensor2string` (the one list, which
    /// the interpreter's dispatch and the side-effect test read).
    pub fn is_tensor(self) -> bool {
        (Builtin::TensorCreateUninitInt..=Builtin::Tensor2string).contains(&self)
    }

    /// Whether it makes a new tensor: the table's first tensor rows, from
    /// `tensorCreateUninitInt` to `tensorCreateDense`.
    pub fn creates_tensor(self) -> bool {
        (Builtin::TensorCreateUninitInt..=Builtin::TensorCreateDense).contains(&self)
    }

    /// Whether it is one of the derivatives (`vjp`, `jvp`, `grad`).
    pub fn is_derivative(self) -> bool {
        matches!(self, Builtin::Vjp | Builtin::Jvp | Builtin::Grad)
    }

    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.iter().copied().find(|b| b.name() == name)
    }
}

/// Type constructors that exist without a declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BuiltinType {
    /// `Ref a`, the type of mutable references.
    Ref,
    /// `Symbol`, the type of `gensym` results.
    Symbol,
}

impl BuiltinType {
    pub const ALL: &'static [BuiltinType] = &[BuiltinType::Ref, BuiltinType::Symbol];

    pub fn name(self) -> &'static str {
        match self {
            BuiltinType::Ref => "Ref",
            BuiltinType::Symbol => "Symbol",
        }
    }

    pub fn arity(self) -> usize {
        match self {
            BuiltinType::Ref => 1,
            BuiltinType::Symbol => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Builtin;

    #[test]
    fn arity_counts_the_parameters() {
        assert_eq!(Builtin::Addf.arity(), 2);
        assert_eq!(Builtin::Negf.arity(), 1);
        assert_eq!(Builtin::Map.arity(), 2);
        assert_eq!(Builtin::Foldl.arity(), 3);
        assert_eq!(Builtin::TensorCreateCArrayInt.arity(), 2);
        assert_eq!(Builtin::SeqLoopAcc.arity(), 3);
        // Every built-in takes what its type says (none is a bare value
        // whose type ends in a bracket left open).
        for b in Builtin::ALL {
            let arrows = b.type_signature().matches("->").count();
            assert!(b.arity() <= arrows, "{}", b.name());
        }
    }

    #[test]
    fn the_tensor_rows_are_those_whose_types_mention_tensors() {
        use crate::signature::Sig;
        fn tensor(s: &Sig) -> bool {
            match s {
                Sig::Tensor(_) => true,
                Sig::Seq(e) => tensor(e),
                Sig::Arrow(a, r) => tensor(a) || tensor(r),
                Sig::Tuple(items) | Sig::Con(_, items) => items.iter().any(tensor),
                _ => false,
            }
        }
        for b in Builtin::ALL {
            let sig = b.signature();
            let takes = sig.params.iter().any(tensor);
            assert_eq!(b.is_tensor(), takes || tensor(&sig.result), "{}", b.name());
            // Made, not taken: the creation rows.
            assert_eq!(b.creates_tensor(), !takes && tensor(&sig.result), "{}", b.name());
        }
    }
}
