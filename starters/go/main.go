// A tic-tac-toe bot for Merknera: serves HTTP (the platform POSTs JSON-RPC to it) or, with
// --connect, connects out over a WebSocket. The protocol: docs/bots/protocol.md.
package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

var lines = [8][3]int{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {0, 3, 6}, {1, 4, 7}, {2, 5, 8}, {0, 4, 8}, {2, 4, 6}}

func won(board []string, mark string) bool {
	for _, l := range lines {
		if board[l[0]] == mark && board[l[1]] == mark && board[l[2]] == mark {
			return true
		}
	}
	return false
}

// ===== YOUR MOVE LOGIC GOES HERE ============================================================
// board: 9 cells "X", "O" or "" (empty), row by row; mark: yours, "X" or "O" (X moves first).
// Return the index (0-8) of an empty cell. This one never loses: it searches every game to
// the end, scoring a win higher the sooner it comes, so it wins when it can and blocks.
func chooseMove(board []string, mark string) int {
	var search func(me, you string, free int) (int, int) // `me` to move: best score, position
	search = func(me, you string, free int) (best, position int) {
		best = math.MinInt
		for i, cell := range board {
			if cell != "" {
				continue
			}
			board[i] = me
			score := 0
			if won(board, me) {
				score = free
			} else if free > 1 {
				theirs, _ := search(you, me, free-1)
				score = -theirs
			}
			board[i] = ""
			if score > best {
				best, position = score, i
			}
		}
		return best, position
	}
	free := 0
	for _, cell := range board {
		if cell == "" {
			free++
		}
	}
	_, position := search(mark, map[string]string{"X": "O", "O": "X"}[mark], free)
	return position
}

// =============================================================================================

type request struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params struct {
		GameID    int      `json:"gameid"`
		Mark      string   `json:"mark"`
		GameState []string `json:"gamestate"`
		Winner    bool     `json:"winner"`
		Message   string   `json:"message"`
	} `json:"params"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// answer is the result of one call from the platform.
func answer(req request) (interface{}, *rpcError) {
	p := req.Params
	switch req.Method {
	case "Status.Ping":
		return map[string]string{"ping": "OK"}, nil
	case "TicTacToe.NewGame":
		return map[string]string{"status": "READY"}, nil
	case "TicTacToe.NextMove":
		if len(p.GameState) != 9 || (p.Mark != "X" && p.Mark != "O") {
			return nil, &rpcError{-32602, `gamestate must be 9 cells, mark "X" or "O"`}
		}
		return map[string]int{"position": chooseMove(p.GameState, p.Mark)}, nil
	case "TicTacToe.Complete":
		result := "drawn"
		if p.Winner {
			result = "won"
		} else if won(p.GameState, "X") || won(p.GameState, "O") {
			result = "lost"
		}
		fmt.Printf("game %d: %s\n", p.GameID, result)
		return nil, nil
	case "TicTacToe.Error":
		log.Printf("game %d: %s", p.GameID, p.Message)
		return nil, nil
	}
	return nil, &rpcError{-32601, "Method not found: " + req.Method}
}

// respond is the JSON-RPC 2.0 response to one request.
func respond(body []byte) map[string]interface{} {
	var req request
	err := json.Unmarshal(body, &req)
	reply := map[string]interface{}{"jsonrpc": "2.0", "id": req.ID}
	if err != nil {
		reply["error"] = rpcError{-32700, "Parse error: " + err.Error()}
	} else if result, err := answer(req); err != nil {
		reply["error"] = err
	} else {
		reply["result"] = result
	}
	return reply
}

type options struct {
	platform, token, name, version, host, endpoint string
	port                                           int
	connect                                        bool
}

func registerParams(o options) map[string]string {
	return map[string]string{"token": o.token, "botname": o.name, "botversion": o.version,
		"game": "TICTACTOE", "programminglanguage": "Go"}
}

// serve answers the platform's POSTs, checking their signature once registered.
func serve(o options) error {
	var secret string
	var mu sync.RWMutex
	signed := func(r *http.Request, body []byte) bool {
		stamp := r.Header.Get("X-Merknera-Timestamp")
		seconds, err := strconv.ParseInt(stamp, 10, 64)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(stamp + "."))
		mac.Write(body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		return err == nil && math.Abs(float64(time.Now().Unix()-seconds)) <= 60 &&
			hmac.Equal([]byte(want), []byte(r.Header.Get("X-Merknera-Signature")))
	}
	listener, err := net.Listen("tcp", net.JoinHostPort(o.host, strconv.Itoa(o.port)))
	if err != nil {
		return err
	}
	go http.Serve(listener, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.RLock()
		defer mu.RUnlock()
		if secret != "" && !signed(r, body) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(respond(body))
	}))
	endpoint := o.endpoint
	if endpoint == "" {
		port := strconv.Itoa(listener.Addr().(*net.TCPAddr).Port)
		endpoint = "http://" + net.JoinHostPort(o.host, port) + "/"
	}
	params := registerParams(o)
	params["rpcendpoint"] = endpoint
	call, _ := json.Marshal(map[string]interface{}{"jsonrpc": "2.0", "id": 1,
		"method": "RegistrationService.Register", "params": params})
	resp, err := http.Post(o.platform+"/rpc", "application/json", bytes.NewReader(call))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var reply struct {
		Result struct{ Message, Secret string }
		Error  json.RawMessage
	}
	err = json.NewDecoder(resp.Body).Decode(&reply)
	if err != nil || len(reply.Error) > 0 && string(reply.Error) != "null" {
		return fmt.Errorf("registration failed: HTTP %d %s %v", resp.StatusCode, reply.Error, err)
	}
	mu.Lock()
	secret = reply.Result.Secret
	mu.Unlock()
	fmt.Printf("registered: %s (serving %s)\n", reply.Result.Message, endpoint)
	select {}
}

// connect keeps one WebSocket to the platform: registers, then answers every request in a
// goroutine of its own; reconnects with back-off when the socket drops.
func connect(o options) error {
	url := "ws" + strings.TrimPrefix(o.platform, "http") + "/rpc/ws"
	delay := time.Second
	for {
		ws, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err == nil {
			var registered bool
			registered, err = session(ws, o, url)
			var closed *websocket.CloseError
			if errors.As(err, &closed) && closed.Code == 4000 {
				fmt.Println("replaced by a newer connection:", closed.Text)
				return nil
			}
			if registered {
				delay = time.Second
			}
		}
		log.Printf("%s: %v; reconnecting in %v", url, err, delay)
		time.Sleep(delay)
		if delay *= 2; delay > 30*time.Second {
			delay = 30 * time.Second
		}
	}
}

// session registers on a new socket, then answers the platform's requests until it closes.
func session(ws *websocket.Conn, o options, url string) (registered bool, err error) {
	defer ws.Close()
	var writing sync.Mutex
	send := func(message interface{}) {
		writing.Lock()
		defer writing.Unlock()
		ws.WriteJSON(message)
	}
	send(map[string]interface{}{"jsonrpc": "2.0", "id": "register",
		"method": "RegistrationService.Register", "params": registerParams(o)})
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return registered, err
		}
		var message struct {
			ID     json.RawMessage
			Method string
			Result struct{ Message string }
			Error  *struct{ Code int }
		}
		json.Unmarshal(data, &message)
		switch {
		case message.Method != "" && len(message.ID) > 0:
			go func() { send(respond(data)) }()
		case string(message.ID) == `"register"` && message.Error != nil:
			// Too many registrations (-32008) or the platform's own trouble (-32603):
			// the socket closes, and the bot tries again.
			if message.Error.Code != -32008 && message.Error.Code != -32603 {
				log.Fatalf("registration failed: %s", data)
			}
		case string(message.ID) == `"register"`:
			registered = true
			fmt.Printf("registered: %s (connected to %s)\n", message.Result.Message, url)
		}
	}
}

func main() {
	var o options
	flag.StringVar(&o.platform, "platform", "http://127.0.0.1:8080", "the platform's base URL")
	flag.StringVar(&o.token, "token", "", "your API token")
	flag.StringVar(&o.name, "name", "go-starter", "the bot's name")
	flag.StringVar(&o.version, "version", "1.0.0", "the bot's version")
	flag.BoolVar(&o.connect, "connect", false, "connect out over a WebSocket instead of serving HTTP")
	flag.StringVar(&o.host, "host", "127.0.0.1", "the address to serve on")
	flag.IntVar(&o.port, "port", 8000, "the port to serve on (0: any free port)")
	flag.StringVar(&o.endpoint, "endpoint", "", "the URL the platform calls (default http://HOST:PORT/)")
	flag.Parse()
	o.platform = strings.TrimRight(o.platform, "/")
	var err error
	if o.connect {
		err = connect(o)
	} else {
		err = serve(o)
	}
	if err != nil {
		log.Fatal(err)
	}
}
