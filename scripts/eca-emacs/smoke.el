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

(pb-gap "rewrite (eca-rewrite → rewrite/prompt)"
  (with-current-buffer (find-file-noselect (expand-file-name "notes.txt" pb-ws))
    (goto-char (point-min))
    (eca-rewrite "make it shorter")))

(pb-gap "inline completion (eca-complete → completion/inline)"
  (with-current-buffer (find-file-noselect (expand-file-name "notes.txt" pb-ws))
    (goto-char (point-max))
    (eca-complete)))

(defvar pb-first-chat (buffer-local-value 'eca-chat--id (pb-chat)))

(pb-step "new chat: a second chat buffer, prompt answered there"
  (with-current-buffer (pb-chat) (eca-chat-new))
  (pb-wait "new buffer" (lambda () (not (equal (buffer-local-value 'eca-chat--id (pb-chat)) pb-first-chat))) 5)
  (pb-script [(:text "Second chat here.")])
  (pb-say "second")
  (and (pb-wait "answer" (lambda () (and (pb-has "Second chat here.") (pb-idle-p))))
       (not (equal (buffer-local-value 'eca-chat--id (pb-chat)) pb-first-chat))))

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
