;;; smoke.el --- drive a real eca-emacs session against patchbay  -*- lexical-binding: t; -*-
;; Run through scripts/eca-emacs/run.sh, which sets PB_SERVER_COMMAND, PB_FAKE_URL, PB_WORKSPACE,
;; PB_OUT and a temp HOME. Each step does what a user does (through eca-emacs's own commands, with
;; `completing-read'/`read-string' answered by the script) and prints PASS/FAIL with what it saw;
;; GAP lines say what Emacs shows for features patchbay does not serve (not failures). eca-emacs's
;; errors go to stderr (the same log). The wire is logged by tee.mjs.

(require 'package)
(package-initialize)
(require 'cl-lib)
(require 'json)
(require 'eca)

(defvar pb-failures 0)
(defvar pb-ws (file-name-as-directory (getenv "PB_WORKSPACE")))
(defvar pb-fake (getenv "PB_FAKE_URL"))

(setq eca-custom-command (split-string (getenv "PB_SERVER_COMMAND") " "))
(setq eca-find-root-for-buffer-function (lambda () pb-ws))
(setq eca-chat-history-page-size 4)
(setq default-directory pb-ws)
;; A pasted image is saved with `make-temp-file': keep it in the run's temp HOME.
(setq temporary-file-directory (file-name-as-directory (make-temp-file (expand-file-name "tmp-" (getenv "HOME")) t)))

(defun pb-log (fmt &rest args)
  (princ (concat (apply #'format fmt args) "\n") #'external-debugging-output))

(defun pb-wait (what pred &optional secs)
  "Pump process output until PRED holds, up to SECS (default 20); non-nil if it did."
  (let ((deadline (+ (float-time) (or secs 20))) ok)
    (while (and (not (setq ok (ignore-errors (funcall pred)))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless ok (pb-log "  (timed out waiting for %s)" what))
    ok))

(defun pb-pump (secs)
  (let ((deadline (+ (float-time) secs)))
    (while (< (float-time) deadline) (accept-process-output nil 0.05))))

(defmacro pb-step (name &rest body)
  "Run BODY as one step; it passes when BODY returns non-nil without signalling."
  (declare (indent 1))
  `(let ((res (condition-case err (progn ,@body)
                (error (pb-log "  error: %S" err) nil))))
     (if res (pb-log "PASS %s" ,name)
       (cl-incf pb-failures)
       (pb-log "FAIL %s" ,name))))

(defun pb-fake (method path &optional body)
  "Talk to the fake LLM's control endpoints (script, requests) with curl."
  (with-temp-buffer
    (apply #'call-process "curl" nil t nil "-s" "-X" method
           (append (when body (list "-H" "content-type: application/json" "-d" (json-encode body)))
                   (list (concat pb-fake path))))
    (goto-char (point-min))
    (unless (= (point-min) (point-max))
      (let ((json-object-type 'plist) (json-array-type 'list)) (json-read)))))

(defun pb-script (&rest replies) (pb-fake "POST" "/__fake/script" (vconcat replies)))
(defun pb-requests () (pb-fake "GET" "/__fake/requests"))
(defun pb-last-request () (car (last (pb-requests))))

(defun pb-session () (eca-session))
(defun pb-chat () (eca-chat--get-last-buffer (pb-session)))
(defun pb-chat-text () (with-current-buffer (pb-chat) (buffer-substring-no-properties (point-min) (point-max))))
(defun pb-idle-p () (with-current-buffer (pb-chat) (and eca-chat--id (null eca-chat--chat-loading))))
(defun pb-loading-p () (with-current-buffer (pb-chat) (eq eca-chat--chat-loading t)))
(defun pb-has (s) (string-match-p (regexp-quote s) (pb-chat-text)))

(defun pb-say (prompt)
  (with-current-buffer (pb-chat) (eca-chat--send-prompt (pb-session) prompt)))

(defun pb-start ()
  (eca)
  (pb-wait "session started" (lambda () (and (pb-session) (eq (eca--session-status (pb-session)) 'started) (buffer-live-p (pb-chat))))))

(defmacro pb-answering (answer &rest body)
  "Run BODY with the minibuffer answering ANSWER (a function of the prompt's candidates, or a string)."
  (declare (indent 1))
  `(cl-letf (((symbol-function 'completing-read)
              (lambda (_p coll &rest _)
                (let ((cands (all-completions "" coll)))
                  (pb-log "  completing-read offered: %S" cands)
                  (if (functionp ,answer) (funcall ,answer cands) ,answer))))
             ((symbol-function 'read-string) (lambda (&rest _) ,answer))
             ((symbol-function 'yes-or-no-p) (lambda (&rest _) t))
             ((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
     ,@body))

(pb-log "eca-emacs %s, Emacs %s, compat %s" (ignore-errors (eca--client-version)) emacs-version
        (ignore-errors (package-desc-version (cadr (assq 'compat package-alist)))))

(pb-step "start: initialize, chat buffer opens"
  (pb-start))

(pb-step "prompt: streamed answer shown, chat back to idle"
  (pb-script [(:text "Hello from the fake model." :chunks 4)])
  (pb-say "hi")
  (and (pb-wait "answer" (lambda () (and (pb-has "Hello from the fake model.") (pb-idle-p))))
       (pb-log "  chat id %s" (buffer-local-value 'eca-chat--id (pb-chat)))))

(pb-step "tool call: approval asked, accepted, tool runs, answer shown"
  (pb-script [(:text "Writing.") (:toolCall (:name "patchbay__write_file" :args (:path "made.txt" :content "made\n")))]
             [(:text "Written it.")])
  (pb-say "make a file")
  (and (pb-wait "pending approval"
                (lambda () (with-current-buffer (pb-chat)
                             (save-excursion (goto-char (point-min))
                                             (text-property-search-forward 'eca-tool-call-pending-approval-accept t t)))))
       (progn (with-current-buffer (pb-chat) (eca-chat-tool-call-accept-next)) t)
       (pb-wait "answer after tool" (lambda () (and (pb-has "Written it.") (pb-idle-p))))
       (file-exists-p (expand-file-name "made.txt" pb-ws))))

(pb-step "stop: a hanging answer is stopped, chat idle again"
  (pb-script [(:text "Thinking") (:stall "forever")])
  (pb-say "take forever")
  (and (pb-wait "loading" (lambda () (and (pb-loading-p) (pb-has "Thinking"))))
       (progn (with-current-buffer (pb-chat) (eca-chat-stop-prompt)) t)
       (pb-wait "idle after stop" #'pb-idle-p)))

(pb-step "steer: a message typed while the model works reaches its next request"
  (pb-script [(:delay 1500) (:toolCall (:name "patchbay__read_file" :args (:path "notes.txt")))]
             [(:text "Steered reply.")])
  (pb-say "read notes")
  ;; Steer once the turn runs (the user sees their message echoed): ECA's `prompt-steer' (chat.clj)
  ;; ignores a steer to a chat not :running, and eca-emacs clears its pending steer on the next
  ;; user-text content, so a steer sent before the echo is silently lost on both sides.
  (and (pb-wait "turn running" (lambda () (and (pb-loading-p) (pb-has "read notes"))))
       (progn (with-current-buffer (pb-chat) (eca-chat--steer-prompt (pb-session) "also be brief")) t)
       (pb-wait "answer" (lambda () (and (pb-has "Steered reply.") (pb-idle-p))) 30)
       (progn (pb-pump 1) t)
       (let ((body (format "%S" (plist-get (pb-last-request) :body))))
         (pb-log "  steer in last LLM request: %s" (and (string-match-p "also be brief" body) t))
         (pb-log "  prompt queued afterwards (steer re-sent): %S" (buffer-local-value 'eca-chat--queued-prompt (pb-chat)))
         (string-match-p "also be brief" body))))

(pb-step "unread steer: the turn ends before the model reads it; eca-emacs re-sends it as a prompt, the model gets it once"
  ;; ECA's contract (chat.clj: a steer not consumed is dropped at the end of the turn), eca-emacs
  ;; `eca-chat--send-steered-prompt' then sends it as the next prompt.
  (let ((before (length (pb-requests))))
    (pb-script [(:text "Slow answer.") (:delay 1500) (:text " Done.")] [(:text "Got the late steer.")])
    (pb-say "answer slowly")
    (and (pb-wait "turn running" (lambda () (and (pb-loading-p) (pb-has "answer slowly"))))
         (progn (with-current-buffer (pb-chat) (eca-chat--steer-prompt (pb-session) "late steer")) t)
         (pb-wait "re-sent steer answered" (lambda () (and (pb-has "Got the late steer.") (pb-idle-p))) 30)
         (progn (pb-pump 1.5) t)
         (let* ((new (nthcdr before (pb-requests)))
                (with-steer (seq-count (lambda (r) (string-match-p "late steer" (format "%S" (plist-get (car (last (plist-get (plist-get r :body) :messages))) :content))))
                                       new)))
           (pb-log "  LLM requests in this step: %d; ending with the steer: %d" (length new) with-steer)
           (and (= (length new) 2) (= with-steer 1))))))

(pb-step "steer removed ([-] beside it: chat/promptSteerRemove): the model never sees it"
  (pb-script [(:delay 1500) (:toolCall (:name "patchbay__read_file" :args (:path "notes.txt")))]
             [(:text "No steer here.")])
  (pb-say "read notes again")
  (and (pb-wait "turn running" (lambda () (and (pb-loading-p) (pb-has "read notes again"))))
       (progn (with-current-buffer (pb-chat)
                (eca-chat--steer-prompt (pb-session) "cancelled steer")
                (eca-chat--remove-steered-prompt (pb-session)))
              t)
       (pb-wait "answer" (lambda () (and (pb-has "No steer here.") (pb-idle-p))) 30)
       (progn (pb-pump 1) t)
       (not (string-match-p "cancelled steer" (format "%S" (pb-requests))))))

(pb-step "model change: chat/selectedModelChanged, next request uses it"
  (pb-answering (lambda (c) (or (car (member "fake/m2" c)) (car c)))
    (with-current-buffer (pb-chat) (eca-chat-select-model)))
  (pb-script [(:text "From m2.")])
  (pb-say "which model")
  (and (pb-wait "answer" (lambda () (and (pb-has "From m2.") (pb-idle-p))))
       (let ((model (plist-get (plist-get (pb-last-request) :body) :model)))
         (pb-log "  LLM request model: %s" model)
         (equal model "m2"))))

(pb-step "agent change: chat/selectedAgentChanged to plan"
  (pb-answering (lambda (c) (or (car (member "plan" c)) (car c)))
    (with-current-buffer (pb-chat) (eca-chat-select-agent)))
  (pb-pump 0.5)
  (let ((agent (with-current-buffer (pb-chat) (eca-chat--agent))))
    (pb-log "  agent now %s" agent)
    (prog1 (equal agent "plan")
      ;; Back to code: the plan agent refuses the writes the next steps make (as ECA's does).
      (pb-answering "code" (with-current-buffer (pb-chat) (eca-chat-select-agent))))))

(pb-step "rename: chat/update with a title"
  (pb-answering "Renamed chat"
    (with-current-buffer (pb-chat) (eca-chat-rename)))
  (pb-pump 0.5)
  (equal (buffer-local-value 'eca-chat--title (pb-chat)) "Renamed chat"))

(pb-step "tool call rejected: nothing written, the model is told"
  (pb-script [(:toolCall (:name "patchbay__write_file" :args (:path "rejected.txt" :content "no\n")))]
             [(:text "Not written then.")])
  (pb-say "write another")
  (and (pb-wait "pending approval"
                (lambda () (with-current-buffer (pb-chat)
                             (save-excursion (goto-char (point-min))
                                             (text-property-search-forward 'eca-tool-call-pending-approval-reject t t)))))
       (progn (with-current-buffer (pb-chat) (eca-chat-tool-call-reject-next)) t)
       (pb-wait "answer after reject" (lambda () (and (pb-has "Not written then.") (pb-idle-p))))
       (not (file-exists-p (expand-file-name "rejected.txt" pb-ws)))))

(pb-step "ask_user: chat/askQuestion shown, answered from the prompt"
  (pb-script [(:toolCall (:name "patchbay__ask_user" :args (:question "Which colour?" :options [(:label "red") (:label "blue")])))]
             [(:text "Blue it is.")])
  (pb-say "ask me")
  (and (pb-wait "question" (lambda () (buffer-local-value 'eca-chat--pending-question (pb-chat))))
       (progn (with-current-buffer (pb-chat) (eca-chat--answer-question "blue")) t)
       (pb-wait "answer" (lambda () (and (pb-has "Blue it is.") (pb-idle-p))))
       (string-match-p "blue" (format "%S" (plist-get (pb-last-request) :body)))))

(pb-step "trust toggled on (chat/update trust): the next write runs without asking"
  (with-current-buffer (pb-chat) (eca-chat-toggle-trust))
  (pb-script [(:toolCall (:name "patchbay__write_file" :args (:path "trusted.txt" :content "t\n")))]
             [(:text "Trusted write done.")])
  (pb-say "write trusted")
  (prog1 (and (pb-wait "answer" (lambda () (and (pb-has "Trusted write done.") (pb-idle-p))))
              (file-exists-p (expand-file-name "trusted.txt" pb-ws)))
    (with-current-buffer (pb-chat) (eca-chat-toggle-trust))))

(pb-step "file context: a file added as context reaches the model"
  (with-current-buffer (pb-chat)
    (eca-chat--add-context (list :type "file" :path (expand-file-name "notes.txt" pb-ws))))
  (pb-script [(:text "Read your notes.")])
  (pb-say "summarise the context")
  (prog1 (and (pb-wait "answer" (lambda () (and (pb-has "Read your notes.") (pb-idle-p))))
              (string-match-p "hello from the workspace" (format "%S" (plist-get (pb-last-request) :body))))
    (with-current-buffer (pb-chat) (setq-local eca-chat--context nil))))

(pb-step "@ and / completion: chat/queryContext, chat/queryFiles, chat/queryCommands answer"
  (with-current-buffer (pb-chat)
    (let* ((id eca-chat--id)
           (ctx (eca-api-request-sync (pb-session) :method "chat/queryContext" :params (list :chatId id :query "notes" :contexts [])))
           (files (eca-api-request-sync (pb-session) :method "chat/queryFiles" :params (list :chatId id :query "notes")))
           (cmds (eca-api-request-sync (pb-session) :method "chat/queryCommands" :params (list :chatId id :query ""))))
      (pb-log "  contexts %d, files %d, commands %S" (length (plist-get ctx :contexts)) (length (plist-get files :files))
              (mapcar (lambda (c) (plist-get c :name)) (plist-get cmds :commands)))
      (and (> (length (plist-get ctx :contexts)) 0) (> (length (plist-get files :files)) 0)
           (> (length (plist-get cmds :commands)) 0)))))

(defun pb-query-files (query)
  (with-current-buffer (pb-chat)
    (mapcar (lambda (f) (plist-get f :path))
            (plist-get (eca-api-request-sync (pb-session) :method "chat/queryFiles" :params (list :chatId eca-chat--id :query query)) :files))))

(pb-step "workspace folders: one added (eca-chat-add-workspace-root) is searched, and no longer once removed (eca-chat-remove-workspace-root)"
  (let* ((dir (directory-file-name (make-temp-file "pb-folder-" t)))
         (file (expand-file-name "added-bee.txt" dir)))
    (write-region "bee\n" nil file)
    (and (not (member file (pb-query-files "added-bee")))
         (cl-letf (((symbol-function 'read-directory-name) (lambda (&rest _) dir)))
           (with-current-buffer (pb-chat) (eca-chat-add-workspace-root))
           t)
         (pb-wait "the added folder's file in chat/queryFiles" (lambda () (member file (pb-query-files "added-bee"))))
         (pb-answering dir (with-current-buffer (pb-chat) (eca-chat-remove-workspace-root)) t)
         (pb-wait "the removed folder's file gone from chat/queryFiles" (lambda () (not (member file (pb-query-files "added-bee"))))))))

(pb-step "panels: providers, jobs, MCP details, workspaces, settings open without error"
  (let ((ok t))
    (dolist (cmd '(eca-providers eca-jobs eca-mcp-details eca-workspaces eca-settings))
      (condition-case err
          (progn (with-current-buffer (pb-chat) (call-interactively cmd)) (pb-pump 1) (pb-log "  %s opened" cmd))
        (error (setq ok nil) (pb-log "  %s: %S" cmd err))))
    ;; What a panel shows when its request failed.
    (dolist (b (buffer-list))
      (when (and (not (string-prefix-p " " (buffer-name b))) ; not internal ones, such as this file's *load*
                 (string-match-p "Failed to load" (with-current-buffer b (buffer-substring-no-properties (point-min) (point-max)))))
        (setq ok nil)
        (pb-log "  %s: %s" (buffer-name b) (with-current-buffer b (string-trim (buffer-string))))))
    (let ((providers (eca--session-providers (pb-session))))
      (pb-log "  providers: %S" (mapcar (lambda (p) (plist-get p :id)) providers))
      (and ok providers))))

;; Known gaps: what Emacs shows for features patchbay does not serve. Logged as GAP, not failures.
(defvar pb-shown nil "Messages eca-emacs showed the user during a gap step.")
(defun pb-record-shown (fmt &rest args) (push (apply #'format fmt args) pb-shown))
(defmacro pb-gap (name &rest body)
  (declare (indent 1))
  `(progn
     (setq pb-shown nil)
     (advice-add 'eca-error :before #'pb-record-shown)
     (advice-add 'eca-warn :before #'pb-record-shown)
     (condition-case err (progn ,@body) (error (push (format "signalled %S" err) pb-shown)))
     (pb-pump 1)
     (advice-remove 'eca-error #'pb-record-shown)
     (advice-remove 'eca-warn #'pb-record-shown)
     (pb-log "GAP %s: Emacs showed %S" ,name (reverse pb-shown))))

(pb-step "rewrite (eca-rewrite → rewrite/prompt): the rewritten text streams into the overlay and finishes"
  (pb-script [(:text "hello, ") (:delay 100) (:text "workspace")])
  (with-current-buffer (find-file-noselect (expand-file-name "notes.txt" pb-ws))
    (goto-char (point-min))
    (eca-rewrite "make it shorter")
    (let ((ov (pb-wait "rewrite finished"
                       (lambda () (cl-find-if (lambda (o) (overlay-get o 'eca-rewrite--total-time-ms))
                                              (overlays-in (point-min) (point-max)))))))
      (when ov (pb-log "  overlay text: %S" (overlay-get ov 'eca-rewrite--new-text)))
      (prog1 (and ov (equal (overlay-get ov 'eca-rewrite--new-text) "hello, workspace"))
        (when ov (eca-rewrite--reject (list ov)))))))

(pb-step "inline completion (eca-complete → completion/inline): the completion shows at point"
  (pb-script [(:text "and more notes")])
  (with-current-buffer (find-file-noselect (expand-file-name "notes.txt" pb-ws))
    (goto-char (point-max))
    (eca-complete)
    (prog1 (pb-wait "completion overlay"
                    (lambda () (and (eca-completion--overlay-visible)
                                    (equal (overlay-get eca-completion--overlay 'completion) "and more notes"))))
      (eca-completion--clear-overlay))))

(defvar pb-first-chat (buffer-local-value 'eca-chat--id (pb-chat)))

(pb-step "new chat: a second chat buffer, prompt answered there"
  (with-current-buffer (pb-chat) (eca-chat-new))
  (pb-wait "new buffer" (lambda () (not (equal (buffer-local-value 'eca-chat--id (pb-chat)) pb-first-chat))) 5)
  (pb-script [(:text "Second chat here.")])
  (pb-say "second")
  (and (pb-wait "answer" (lambda () (and (pb-has "Second chat here.") (pb-idle-p))))
       (not (equal (buffer-local-value 'eca-chat--id (pb-chat)) pb-first-chat))))

;; The features merged after the first run, in the second chat, each through eca-emacs's own
;; commands and buttons. Rollback comes last: it takes the turns after its message away.

(defun pb-press (label &optional after)
  "Put point on the first LABEL (past the first AFTER, if given) in the chat buffer and press RET,
as a user does on a block or button."
  (with-current-buffer (pb-chat)
    (goto-char (point-min))
    (let ((case-fold-search nil))
      (when after (search-forward after))
      (search-forward label))
    (goto-char (match-beginning 0))
    (eca-chat--key-pressed-return)))

(defun pb-wire-count (method)
  "How many METHOD messages the wire log holds so far."
  (with-temp-buffer
    (insert-file-contents (expand-file-name "wire.jsonl" (getenv "PB_OUT")))
    (how-many (regexp-quote (format "\"method\":\"%s\"" method)) (point-min) (point-max))))

(defun pb-wire-find (pred)
  "The first message patchbay sent the editor (from the wire log) for which PRED holds."
  (with-temp-buffer
    (insert-file-contents (expand-file-name "wire.jsonl" (getenv "PB_OUT")))
    (goto-char (point-min))
    (let ((json-object-type 'plist) (json-array-type 'list) found)
      (while (and (not found) (not (eobp)))
        (let ((line (ignore-errors (json-read-from-string (buffer-substring-no-properties (point) (line-end-position))))))
          (when (and line (equal (plist-get line :dir) "patchbay->editor") (funcall pred (plist-get line :msg)))
            (setq found (plist-get line :msg))))
        (forward-line 1))
      found)))

(defun pb-block-has (s)
  "Whether S is in the chat buffer, shown or kept in a collapsed block (eca-chat.el keeps a closed
block's text in its overlay's `eca-chat--expandable-content-content')."
  (or (pb-has s)
      (with-current-buffer (pb-chat)
        (cl-some (lambda (ov) (let ((c (overlay-get ov 'eca-chat--expandable-content-content)))
                                (and (stringp c) (string-match-p (regexp-quote s) c))))
                 (overlays-in (point-min) (point-max))))))

(defun pb-request-has (s) (string-match-p (regexp-quote s) (format "%S" (plist-get (pb-last-request) :body))))

(defun pb-trusted-turn-here (prompt answer &rest replies)
  "Send PROMPT in the current chat with trust on and wait for ANSWER; REPLIES script the model."
  (let ((chat (pb-chat)))
    (with-current-buffer chat (eca-chat-toggle-trust))
    (apply #'pb-script replies)
    (pb-say prompt)
    (prog1 (pb-wait "answer" (lambda () (and (pb-has answer) (pb-idle-p))))
      (with-current-buffer chat (eca-chat-toggle-trust)))))

;; The panels' actions, as their buttons call them (eca-providers.el, eca-mcp.el, eca-jobs.el).
(defun pb-provider (id) (cl-find-if (lambda (p) (equal (plist-get p :id) id)) (eca--session-providers (pb-session))))
(defun pb-tool-server (name) (cdr (assoc name (eca--session-tool-servers (pb-session)))))

(pb-step "providers: Add Key (eca-providers--do-login → providers/login, the key typed in read-passwd → providers/loginInput), providers/updated shows it logged in; Logout"
  (cl-letf (((symbol-function 'read-passwd) (lambda (&rest _) "sk-emacs-typed-0123456789"))
            ((symbol-function 'completing-read)
             (lambda (_p coll &rest _)
               (let ((cands (all-completions "" coll)))
                 (pb-log "  login methods offered: %S" cands)
                 (or (cl-find-if (lambda (c) (string-match-p "key" (downcase c))) cands) (car cands))))))
    (eca-providers--do-login (pb-session) "openai" nil)
    (and (pb-wait "openai logged in"
                  (lambda () (equal (plist-get (plist-get (pb-provider "openai") :auth) :source) "login")))
         (progn (pb-log "  openai auth: %S" (plist-get (pb-provider "openai") :auth)) t)
         (progn (eca-api-request-async (pb-session) :method "providers/logout" :params (list :provider "openai")
                                       :success-callback (lambda (_) nil))
                (pb-wait "openai logged out"
                         (lambda () (equal (plist-get (plist-get (pb-provider "openai") :auth) :status) "unauthenticated"))))
         ;; The key reached no log line Emacs saw and no message on the wire but the one Emacs sent.
         (not (string-match-p "sk-emacs-typed" (with-temp-buffer (insert-file-contents (expand-file-name "logs/server.log" (getenv "PATCHBAY_HOME"))) (buffer-string)))))))

(pb-step "MCP panel: add a server (eca-mcp--submit-add-server → mcp/addServer, global scope), it runs; disable, enable, remove (tool/serverRemoved)"
  (with-temp-buffer
    (setq-local eca-mcp--add-form-state
                (list :name "notes" :transport "stdio" :scope "global"
                      :command "node" :args (expand-file-name "test/fixtures/mcp-notes.mjs" (getenv "PB_REPO"))))
    (eca-mcp--submit-add-server (pb-session)))
  (and (pb-wait "notes running" (lambda () (equal (plist-get (pb-tool-server "notes") :status) "running")) 30)
       (let ((cfg (expand-file-name "patchbay/config.json" (getenv "XDG_CONFIG_HOME"))))
         (pb-log "  %s: %s" cfg (with-temp-buffer (insert-file-contents cfg) (string-trim (buffer-string))))
         t)
       (progn (eca-api-notify (pb-session) :method "mcp/disableServer" :params (list :name "notes"))
              (pb-wait "notes disabled" (lambda () (equal (plist-get (pb-tool-server "notes") :status) "disabled"))))
       (progn (eca-api-notify (pb-session) :method "mcp/enableServer" :params (list :name "notes"))
              (pb-wait "notes running again" (lambda () (equal (plist-get (pb-tool-server "notes") :status) "running")) 30))
       (progn (eca-mcp--submit-remove-server (pb-session) "notes")
              (pb-wait "notes removed" (lambda () (null (pb-tool-server "notes")))))))

(pb-step "background job: the model starts one (shell_command background), the Jobs panel lists it (jobs/updated), its output is read (jobs/readOutput), it is killed (jobs/kill)"
  (pb-trusted-turn-here "start the watcher" "Started it."
                   [(:toolCall (:name "patchbay__shell_command" :args (:command "echo watching; sleep 600" :background "watcher")))]
                   [(:text "Started it.")])
  (let ((job (pb-wait "job listed" (lambda () (cl-find-if (lambda (j) (equal (plist-get j :status) "running")) (eca--session-jobs (pb-session)))))))
    (and job
         (progn (pb-log "  job: %S" job) t)
         (let ((id (plist-get job :id)))
           (eca-jobs--view-output-by-id (pb-session) id)
           (and (pb-wait "job output buffer"
                         (lambda () (let ((b (get-buffer (format "*eca-job-output: %s*" id))))
                                      (and b (string-match-p "watching" (with-current-buffer b (buffer-string)))))))
                (progn (eca-api-request-async (pb-session) :method "jobs/kill" :params (list :job-id id) :success-callback (lambda (_) nil))
                       (pb-wait "job killed"
                                (lambda () (cl-find-if (lambda (j) (and (equal (plist-get j :id) id) (equal (plist-get j :status) "killed")))
                                                       (eca--session-jobs (pb-session)))))))))))

(pb-step "variant: model changed to one with variants (config/updated lists them), eca-chat-select-variant, the request carries its payload"
  ;; eca-chat.el `eca-chat-select-model' sends chat/selectedModelChanged; ECA handlers.clj answers with
  ;; config/updated {chatId, chat: {variants, selectVariant}}, which sets `eca-chat--available-variants'.
  ;; Wait for that config/updated itself, not only for "terse" on offer: the chat offered it already
  ;; (m1 is the default model), and a variant picked before the answer arrives is reset by it.
  (let ((updates (pb-wire-count "config/updated")))
    (pb-answering (lambda (c) (or (car (member "fake/m1" c)) (car c)))
      (with-current-buffer (pb-chat) (eca-chat-select-model)))
    (pb-wait "config/updated for the model" (lambda () (> (pb-wire-count "config/updated") updates)) 5)
    (pb-pump 0.3))
  (and (pb-wait "variants offered" (lambda () (member "terse" (buffer-local-value 'eca-chat--available-variants (pb-chat)))) 5)
       (progn (pb-answering (lambda (c) (or (car (member "terse" c)) (car c)))
                (with-current-buffer (pb-chat) (eca-chat-select-variant)))
              (pb-log "  variant selected: %S" (with-current-buffer (pb-chat) (eca-chat--variant)))
              t)
       (progn (pb-script [(:text "Terse answer.")])
              (pb-say "be terse")
              (pb-wait "answer" (lambda () (and (pb-has "Terse answer.") (pb-idle-p)))))
       (let ((body (plist-get (pb-last-request) :body)))
         (pb-log "  variant %S; LLM request model %s max_tokens %S" (with-current-buffer (pb-chat) (eca-chat--variant))
                 (plist-get body :model) (plist-get body :max_tokens))
         (and (equal (plist-get body :model) "m1") (equal (plist-get body :max_tokens) 77)
              (equal (with-current-buffer (pb-chat) (eca-chat--variant)) "terse")))))

(pb-step "text context: a non-file buffer added (eca-chat-add-context-to-system-prompt) reaches the model"
  ;; eca-chat-context.el `eca-chat--buffer-context' / `eca-chat--materialize-context': {type "text", label, content}.
  (with-current-buffer (get-buffer-create "build-output")
    (erase-buffer)
    (insert "error: the frobnicator is 42 parsecs off\n")
    (eca-chat-add-context-to-system-prompt))
  (pb-script [(:text "Saw the build output.")])
  (pb-say "what does the build say")
  (prog1 (and (pb-wait "answer" (lambda () (and (pb-has "Saw the build output.") (pb-idle-p))))
              (pb-request-has "frobnicator is 42 parsecs"))
    (with-current-buffer (pb-chat) (setq-local eca-chat--context nil))))

(pb-step "image context: a pasted image (eca-chat--yank-image-handler, yank-media's handler) reaches the model as an image"
  ;; Emacs 28 has no `yank-media', so the handler it registers is called with what a paste gives it.
  (let ((png (base64-decode-string "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")))
    (with-current-buffer (pb-chat) (eca-chat--yank-image-handler "image/png" png)))
  (pb-log "  prompt after paste: %S" (with-current-buffer (pb-chat) (eca-chat--prompt-content)))
  (pb-script [(:text "A one-pixel image.")])
  (with-current-buffer (pb-chat)
    (goto-char (point-max))
    (insert "what is in it")
    (eca-chat--key-pressed-return))
  (and (pb-wait "answer" (lambda () (and (pb-has "A one-pixel image.") (pb-idle-p))))
       (pb-request-has "data:image/png;base64,iVBORw0KGgo")))

(pb-step "MCP elicitation: the elicit server's question arrives as chat/askQuestion, answered from the prompt, the tool gets it"
  (pb-script [(:toolCall (:name "elicit__confirm" :args (:)))]
             [(:text "Branch handled.")])
  (pb-say "delete the branch")
  (and (pb-wait "question" (lambda () (buffer-local-value 'eca-chat--pending-question (pb-chat))) 30)
       (progn (pb-log "  question: %S" (plist-get (buffer-local-value 'eca-chat--pending-question (pb-chat)) :question)) t)
       (progn (with-current-buffer (pb-chat) (eca-chat--answer-question "Yes")) t)
       (pb-wait "answer" (lambda () (and (pb-has "Branch handled.") (pb-idle-p))))
       (pb-request-has "\\\"action\\\":\\\"accept\\\"")))

(pb-step "task list: planned and completed (Tasks 1/1 block), cleared when the next prompt starts (block removed)"
  ;; eca-chat.el `eca-chat--update-task-state': an empty :tasks removes the block.
  (pb-script [(:toolCall (:name "patchbay__task" :args (:op "plan" :tasks [(:subject "Only task" :description "the one")])))]
             [(:toolCall (:name "patchbay__task" :args (:op "complete" :ids [1])))]
             [(:text "All tasks done.")])
  (pb-say "plan and do it")
  (and (pb-wait "answer" (lambda () (and (pb-has "All tasks done.") (pb-idle-p))))
       (with-current-buffer (pb-chat)
         (pb-log "  task block shown: %s; tasks %S" (and (eca-chat--get-expandable-content eca-chat--task-block-id) t)
                 (plist-get eca-chat--task-state :tasks))
         (and (eca-chat--get-expandable-content eca-chat--task-block-id) (pb-has "Tasks ") (pb-has "(1/1)")))
       (progn (pb-script [(:text "Next thing.")]) (pb-say "next") t)
       (pb-wait "answer" (lambda () (and (pb-has "Next thing.") (pb-idle-p))))
       (with-current-buffer (pb-chat)
         (pb-log "  task block after the next prompt: %s" (and (eca-chat--get-expandable-content eca-chat--task-block-id) t))
         (null (eca-chat--get-expandable-content eca-chat--task-block-id)))))

(defvar pb-main-chat nil)

(pb-step "flag: eca-chat-add-flag after a message (chat/addFlag: chat cleared and replayed with the flag)"
  (setq pb-main-chat (pb-chat))
  (pb-script [(:text "Flag point answer.")])
  (pb-say "flag me here")
  (and (pb-wait "answer" (lambda () (and (pb-has "Flag point answer.") (pb-idle-p))))
       (progn (with-current-buffer (pb-chat)
                (goto-char (point-min))
                (search-forward "Flag point answer.")
                (pb-answering "my checkpoint" (eca-chat-add-flag)))
              t)
       (pb-wait "flag shown" (lambda () (pb-has "my checkpoint")) 5)
       (pb-has "Flag point answer.")))

(pb-step "flag after an answer the model thought about: the nearest block is its live reasoning (\"Thought\")"
  ;; `eca-chat-add-flag' sends the id of the nearest block at or before point: after a thinking
  ;; model's answer that is the reasoning block, whose id came with reasonStarted during the turn.
  (pb-script [(:reasoning "Pondering where flags go.") (:text "Thought-through answer.")])
  (pb-say "think first")
  (and (pb-wait "answer" (lambda () (and (pb-has "Thought-through answer.") (pb-idle-p))))
       (progn (with-current-buffer (pb-chat)
                (goto-char (point-min))
                (search-forward "Thought-through answer.")
                (pb-answering "thought flag" (eca-chat-add-flag)))
              t)
       (pb-wait "flag shown" (lambda () (pb-has "thought flag")) 5)))

(pb-step "fork from the flag (Fork from here → chat/fork): a new chat buffer with the messages up to the flag"
  (let ((before (mapcar #'cdr (eca--session-chats (pb-session)))))
    (pb-press "my checkpoint")
    (pb-press "Fork from here")
    (let ((fork (pb-wait "forked buffer"
                         (lambda () (seq-find (lambda (b) (and (buffer-live-p b) (not (memq b before))
                                                              (string-match-p "flag me here" (with-current-buffer b (buffer-string)))))
                                              (mapcar #'cdr (eca--session-chats (pb-session)))))
                         10)))
      (when fork
        (pb-log "  fork %s title %S; has the answer after the flag: %s" (buffer-local-value 'eca-chat--id fork)
                (buffer-local-value 'eca-chat--title fork)
                (and (string-match-p "Flag point answer." (with-current-buffer fork (buffer-string))) t)))
      (and fork (eq (pb-chat) pb-main-chat)
           (pb-wait "told in the source chat" (lambda () (pb-has "Chat forked to")) 5)))))

(pb-step "fork the chat (eca-chat-fork, from the latest message): another chat buffer"
  (let ((before (length (eca--session-chats (pb-session)))))
    (with-current-buffer pb-main-chat (eca-chat-fork))
    (pb-wait "second fork" (lambda () (> (length (eca--session-chats (pb-session))) before)) 10)))

(pb-step "remove the flag (Remove flag → chat/removeFlag): gone from the buffer"
  (with-current-buffer pb-main-chat
    (pb-press "Remove flag")
    (pb-pump 0.5)
    (not (pb-has "my checkpoint"))))

(pb-step "rollback (Rollback chat to before this message, messages and tool changes): the files come back, the kept messages show, the prompt text is restored"
  ;; eca-chat.el `eca-chat--rollback' → chat/rollback; ECA chat.clj `rollback-chat': chat/cleared then the kept messages.
  (write-region "original\n" nil (expand-file-name "rb-old.txt" pb-ws))
  (with-current-buffer pb-main-chat (eca-chat-toggle-trust))
  (pb-script [(:toolCall (:name "patchbay__write_file" :args (:path "rb-new.txt" :content "new\n")))]
             [(:toolCall (:name "patchbay__write_file" :args (:path "rb-old.txt" :content "changed\n")))]
             [(:text "Both written.")])
  (pb-say "change two files")
  (and (pb-wait "answer" (lambda () (and (pb-has "Both written.") (pb-idle-p))))
       (progn (with-current-buffer pb-main-chat (eca-chat-toggle-trust)) t)
       (file-exists-p (expand-file-name "rb-new.txt" pb-ws))
       (progn (pb-press "change two files")
              (pb-answering (lambda (c) (car (member "1. Rollback messages and changes done by tool calls" c)))
                (pb-press "Rollback chat to before this message"))
              t)
       (pb-wait "rolled back" (lambda () (and (not (pb-has "Both written.")) (pb-has "Flag point answer."))) 10)
       (let ((new-gone (not (file-exists-p (expand-file-name "rb-new.txt" pb-ws))))
             (old (with-temp-buffer (insert-file-contents (expand-file-name "rb-old.txt" pb-ws)) (buffer-string)))
             (prompt (with-current-buffer pb-main-chat (eca-chat--prompt-content)))
             (flag-back (pb-has "my checkpoint")))
         (pb-log "  rb-new.txt gone: %s; rb-old.txt: %S; prompt: %S; removed flag replayed: %s" new-gone old prompt flag-back)
         (and new-gone (equal old "original\n") (equal (string-trim (or prompt "")) "change two files") (not flag-back)))
       ;; The restored prompt sent again: the model no longer sees the rolled-back turn.
       (progn (pb-script [(:text "Fresh start.")])
              (with-current-buffer pb-main-chat (goto-char (point-max)) (eca-chat--key-pressed-return))
              (pb-wait "answer" (lambda () (and (pb-has "Fresh start.") (pb-idle-p)))))
       (let ((msgs (plist-get (plist-get (pb-last-request) :body) :messages)))
         (pb-log "  next request: %d messages; has the rolled-back answer: %s" (length msgs) (and (pb-request-has "Both written.") t))
         (not (pb-request-has "Both written.")))))

(defun pb-trusted-turn (prompt answer &rest replies)
  "Send PROMPT with trust on (its tool calls run unasked) and wait for ANSWER; REPLIES script the model."
  (with-current-buffer pb-main-chat (eca-chat-toggle-trust))
  (apply #'pb-script replies)
  (pb-say prompt)
  (prog1 (pb-wait "answer" (lambda () (and (pb-has answer) (pb-idle-p))))
    (with-current-buffer pb-main-chat (eca-chat-toggle-trust))))

(defun pb-rollback (prompt choice)
  "Open the user message PROMPT's block and press its rollback button, picking CHOICE."
  (pb-press prompt)
  (pb-answering (lambda (c) (car (member choice c)))
    (pb-press "Rollback chat to before this message" prompt)))

(pb-step "rollback only the tool changes (choice 3): the file is restored, the messages stay, the prompt is left alone"
  ;; ECA chat.clj `rollback-chat' without "messages": no chat/cleared, nothing replayed.
  (and (pb-trusted-turn "touch again" "Touched."
                        [(:toolCall (:name "patchbay__write_file" :args (:path "rb-old.txt" :content "changed again\n")))]
                        [(:text "Touched.")])
       (progn (pb-rollback "touch again" "3. Rollback only changes done by tool calls") (pb-pump 1) t)
       (let ((old (with-temp-buffer (insert-file-contents (expand-file-name "rb-old.txt" pb-ws)) (buffer-string)))
             (prompt (with-current-buffer pb-main-chat (eca-chat--prompt-content))))
         (pb-log "  rb-old.txt: %S; answer still shown: %s; prompt: %S" old (and (pb-has "Touched.") t) prompt)
         (and (equal old "original\n") (pb-has "Touched.") (string-empty-p (string-trim (or prompt "")))))))

(pb-step "rollback only the messages (choice 2): the messages go, the prompt text is restored, the written file stays"
  (and (pb-trusted-turn "keep the file" "Kept it."
                        [(:toolCall (:name "patchbay__write_file" :args (:path "rb-keep.txt" :content "keep\n")))]
                        [(:text "Kept it.")])
       (progn (pb-rollback "keep the file" "2. Rollback only messages") t)
       (pb-wait "rolled back" (lambda () (and (not (pb-has "Kept it.")) (pb-has "Touched."))) 10)
       (let ((kept (file-exists-p (expand-file-name "rb-keep.txt" pb-ws)))
             (prompt (with-current-buffer pb-main-chat (eca-chat--prompt-content))))
         (pb-log "  rb-keep.txt still there: %s; prompt: %S" kept prompt)
         (with-current-buffer pb-main-chat
           (write-region (point-min) (point-max) (expand-file-name "rolled-back-chat-buffer.txt" (getenv "PB_OUT"))))
         (and kept (equal (string-trim (or prompt "")) "keep the file")))))

;; The agent runtime (issue 18): the workspace's AGENTS.md and .patchbay/commands/greet.md, and the
;; config's `audit` preToolCall hook, come from run.sh.
(pb-step "AGENTS.md: the workspace's instructions reach the model's system prompt"
  (pb-script [(:text "Instructions read.")])
  (pb-say "what are the rules?")
  (and (pb-wait "answer" (lambda () (and (pb-has "Instructions read.") (pb-idle-p))))
       (pb-request-has "Project rule from AGENTS.md: answer in English.")))

(pb-step "custom command: chat/queryCommands lists /greet (type custom-prompt, its description); /greet World sends the rendered prompt"
  (let* ((cmds (with-current-buffer (pb-chat)
                 (plist-get (eca-api-request-sync (pb-session) :method "chat/queryCommands" :params (list :chatId eca-chat--id :query "greet")) :commands)))
         (greet (cl-find-if (lambda (c) (equal (plist-get c :name) "greet")) cmds)))
    (pb-log "  greet: %S" greet)
    (and greet (equal (plist-get greet :type) "custom-prompt") (equal (plist-get greet :description) "Greets someone by name")
         (progn (pb-script [(:text "Hello World, greeted.")])
                (pb-say "/greet World")
                (pb-wait "answer" (lambda () (and (pb-has "Hello World, greeted.") (pb-idle-p)))))
         (pb-request-has "Say hello to World from the custom command."))))

(pb-step "hook: the audit preToolCall hook's block shows (hookActionStarted → \"Executed hook 'audit'\") and the tool still runs"
  (pb-script [(:toolCall (:name "patchbay__read_file" :args (:path "notes.txt")))]
             [(:text "Read it after the hook.")])
  (pb-say "read the notes")
  (and (pb-wait "answer" (lambda () (and (pb-has "Read it after the hook.") (pb-idle-p))))
       (pb-has "Executed hook 'audit'")
       (pb-request-has "hello from the workspace")))

(pb-step "subagent (patchbay__spawn_agent explorer): its contents arrive with parentChatId and show nested under the call; its answer returns to the parent"
  (pb-trusted-turn-here "explore for me" "The explorer says 42."
                        [(:toolCall (:name "patchbay__spawn_agent" :args (:agent "explorer" :task "Find the magic number" :activity "Looking for the number")))]
                        [(:text "Child found 42 in notes.")]
                        [(:text "The explorer says 42.")])
  (let ((child (pb-wire-find (lambda (m) (and (equal (plist-get m :method) "chat/contentReceived")
                                              (plist-get (plist-get m :params) :parentChatId))))))
    (pb-log "  first child content: %S" (and child (plist-get (plist-get child :params) :content)))
    (pb-log "  parent buffer: the call %S, the child's answer inside its (collapsed) block %S, the parent's answer %S; tool result to the parent %S"
            (pb-has "explorer") (pb-block-has "Child found 42 in notes.") (pb-has "The explorer says 42.") (pb-request-has "Child found 42 in notes."))
    (and child
         (pb-has "The explorer says 42.")
         (pb-block-has "Child found 42 in notes.")
         (equal (plist-get (plist-get child :params) :parentChatId) (buffer-local-value 'eca-chat--id (pb-chat)))
         (pb-request-has "Child found 42 in notes."))))

(pb-step "stop session: shutdown + exit"
  (eca-stop)
  (pb-wait "session gone" (lambda () (null (eca-vals eca--sessions))) 10))

(pb-step "restart and resume the renamed chat from chat/list (chat/open)"
  (and (pb-start)
       (progn
         (pb-answering (lambda (c) (or (car (member "Renamed chat" c)) (car c)))
           (with-current-buffer (pb-chat) (eca-chat-resume)))
         t)
       (pb-wait "resumed buffer" (lambda () (and (equal (buffer-local-value 'eca-chat--id (pb-chat)) pb-first-chat)
                                                 (pb-has "Read your notes."))))
       (with-current-buffer (pb-chat)
         (pb-log "  restored model %s agent %s title %s older-cursor %S"
                 (eca-chat--model) (eca-chat--agent) eca-chat--title eca-chat--history-before-cursor)
         t)))

(pb-step "history: load older messages (chat/history with the before cursor)"
  (with-current-buffer (pb-chat)
    (if (not eca-chat--history-before-cursor)
        (progn (pb-log "  no older page offered") (pb-has "hi"))
      (let ((size (buffer-size)) (cursor eca-chat--history-before-cursor))
        (eca-chat-load-older-history)
        (and (pb-wait "older page" (lambda () (and (> (buffer-size) size) (not (equal eca-chat--history-before-cursor cursor)))))
             (progn (pb-log "  next older cursor %S" eca-chat--history-before-cursor) t)
             (pb-has "Blue it is."))))))

(pb-step "resumed chat goes on: prompt answered with the restored model"
  (pb-script [(:text "Still here.")])
  (pb-say "again")
  (and (pb-wait "answer" (lambda () (and (pb-has "Still here.") (pb-idle-p))))
       (let ((model (plist-get (plist-get (pb-last-request) :body) :model)))
         (pb-log "  LLM request model: %s" model) t)))

(with-current-buffer (pb-chat)
  (write-region (point-min) (point-max) (expand-file-name "chat-buffer.txt" (getenv "PB_OUT"))))
(dolist (b (buffer-list))
  (when (string-match-p "^<eca:\\(stderr\\|emacs-errors\\)" (buffer-name b))
    (pb-log "---- %s\n%s" (buffer-name b) (with-current-buffer b (buffer-string)))))
(pb-step "final stop" (eca-stop) t)
(pb-log "%d step(s) failed" pb-failures)
(kill-emacs (if (zerop pb-failures) 0 1))
