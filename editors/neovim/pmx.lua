-- pmx for Neovim: `pmx lsp` as the language server, the tree-sitter grammar
-- in compiler/tree-sitter-mexpr for highlighting. Put this file in your
-- config (e.g. ~/.config/nvim/plugin/pmx.lua) and set PMX_REPO below, or
-- the environment variable of that name, to your checkout of pmx.

local PMX_REPO = vim.env.PMX_REPO or vim.fn.expand('~/src/pmx')

-- `.mc` files are MExpr.
vim.filetype.add({ extension = { mc = 'mexpr' } })

-- The language server. Neovim 0.11 and newer:
if vim.lsp.config then
  vim.lsp.config('pmx', {
    cmd = { 'pmx', 'lsp' },
    filetypes = { 'mexpr' },
    root_markers = { '.git' },
  })
  vim.lsp.enable('pmx')
else
  -- Older Neovim, with nvim-lspconfig: a custom server.
  local configs = require('lspconfig.configs')
  if not configs.pmx then
    configs.pmx = {
      default_config = {
        cmd = { 'pmx', 'lsp' },
        filetypes = { 'mexpr' },
        root_dir = require('lspconfig.util').root_pattern('.git'),
        single_file_support = true,
      },
    }
  end
  require('lspconfig').pmx.setup({})
end

-- The tree-sitter grammar (nvim-treesitter, `master` branch): then run
-- `:TSInstall mexpr`. The highlight query is the grammar's own
-- queries/highlights.scm, found through the runtime path below.
local ok, parsers = pcall(require, 'nvim-treesitter.parsers')
if ok and parsers.get_parser_configs then
  parsers.get_parser_configs().mexpr = {
    install_info = {
      url = PMX_REPO .. '/compiler/tree-sitter-mexpr',
      files = { 'src/parser.c', 'src/scanner.c' },
      generate_requires_npm = false,
      requires_generate_from_grammar = false,
    },
    filetype = 'mexpr',
  }
end
-- Neovim looks for queries in `queries/mexpr/` of every runtime path entry:
-- the grammar folder has `queries/highlights.scm` directly, so link it:
--   mkdir -p ~/.config/nvim/queries/mexpr
--   ln -s $PMX_REPO/compiler/tree-sitter-mexpr/queries/highlights.scm ~/.config/nvim/queries/mexpr/
vim.api.nvim_create_autocmd('FileType', {
  pattern = 'mexpr',
  callback = function(args)
    pcall(vim.treesitter.start, args.buf, 'mexpr')
    vim.bo[args.buf].commentstring = '-- %s'
  end,
})
