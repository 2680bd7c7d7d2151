extends Node

# Added by `gd-assets verify --run` as the first autoload of a scratch copy (never of the copy itself),
# in Godot 4. The requests file (path in $GD_RUN_REQUESTS) has one tab-separated request a line:
#   mode <TAB> main|scenes    frames <TAB> N    scene_frames <TAB> K    seed <TAB> S    scene <TAB> res://x.tscn
# `main`: the game starts as it would (its main scene, its autoloads) and runs N frames at the fixed
# frame rate the command line sets; then the scene tree is printed and the game ends. `scenes`: the
# main scene is a blank one, and each listed scene is instanced alone for K frames, then freed.
# `play`: the game starts as in `main`, rendered, with the input events the requests give by physics frame
#   (event <TAB> F <TAB> press|release <TAB> action, or click|unclick <TAB> K: the K-th visible button), a
#   frame saved every `shot_every` frames and once a new scene has settled, and every `trace_every` frames
#   a trace of the drawn nodes (shots <TAB> folder: f000060.png..., trace.tsv).
# What this prints goes to stderr between marker lines; what the game prints stays as it is.

const MARK := "@@gd-run"
const SNAPSHOT_EVERY := 60

var _mode := "main"
var _frames := 600
var _scene_frames := 30
var _scenes: Array[String] = []
var _frame := 0
var _index := -1
var _current: Node = null
var _left := 0
var _last_tree: PackedStringArray = []
var _done := false
var _starting := false  # the next scene is on its way (deferred)
var _shots := ""
var _shot_every := 60
var _trace_every := 10
var _shot_width := 640  # frames are kept at most this wide (they are compared so)
var _burst := 0  # frames kept on each side of a kept frame (`b` files), to time-align what is animated
var _events := {}
var _physics := 0
var _trace_file: FileAccess = null
var _scene_id := -1
var _shot_at := {}
var _clicked = null


func _say(parts: Array) -> void:
	printerr(MARK + " " + "\t".join(parts.map(func(p): return str(p))))


func _init() -> void:
	process_mode = Node.PROCESS_MODE_ALWAYS
	process_priority = -1000000
	process_physics_priority = -1000000
	var text := FileAccess.get_file_as_string(OS.get_environment("GD_RUN_REQUESTS"))
	var seed_value: String = ""
	for line in text.split("\n", false):
		var parts := line.split("\t")
		match parts[0]:
			"mode": _mode = parts[1]
			"frames": _frames = int(parts[1])
			"scene_frames": _scene_frames = int(parts[1])
			"seed": seed_value = parts[1]
			"scene": _scenes.append(parts[1])
			"shots": _shots = parts[1]
			"shot_every": _shot_every = int(parts[1])
			"trace_every": _trace_every = int(parts[1])
			"burst": _burst = int(parts[1])
			"shot_width": _shot_width = int(parts[1])
			"event":
				var at := int(parts[1])
				if not _events.has(at):
					_events[at] = []
				_events[at].append([parts[2], parts[3] if parts.size() > 3 else ""])
	if _shots != "":
		_trace_file = FileAccess.open(_shots + "/trace.tsv", FileAccess.WRITE)
	if seed_value != "":  # no seed asked: the engine's own start
		seed(int(seed_value))
	_say(["BEGIN", _mode])


func _position(node: Node) -> String:
	if node is Node2D:
		return "%d,%d" % [roundi(node.position.x), roundi(node.position.y)]
	if node is Control:
		return "%d,%d" % [roundi(node.position.x), roundi(node.position.y)]
	if node is Node3D:
		return "%.2f,%.2f,%.2f" % [node.position.x, node.position.y, node.position.z]
	return ""


func _visible(node: Node) -> String:
	if node is CanvasItem or node is Node3D:
		return "1" if node.visible else "0"
	return ""


func _walk(node: Node, path: String, out: PackedStringArray) -> void:
	for child in node.get_children():
		if child == self:
			continue
		var own := path + "/" + String(child.name) if path != "" else String(child.name)
		var script = child.get_script()
		var script_path: String = script.resource_path if script != null else ""
		out.append("\t".join(["NODE", own, child.get_class(), script_path, _visible(child), _position(child)]))
		_walk(child, own, out)


func _tree() -> PackedStringArray:
	var out: PackedStringArray = []
	_walk(get_tree().root, "", out)
	return out


func _print_tree(lines: PackedStringArray, frame: int) -> void:
	_say(["TREE", frame, lines.size()])
	for line in lines:
		printerr(MARK + " " + line)


func _process(_delta: float) -> void:
	if _done:
		return
	_frame += 1
	if _mode == "play":
		_play_frame()
		return
	if _mode == "main":
		if _frame % SNAPSHOT_EVERY == 0:
			_last_tree = _tree()
		if _frame >= _frames:
			_done = true
			_print_tree(_tree(), _frame)
			_say(["DONE", _frame])
			get_tree().quit()
		return
	if _starting:
		return
	if _current != null:
		_left -= 1
		if _left > 0:
			return
		if is_instance_valid(_current):
			_current.free()
		_say(["END", "scene", _scenes[_index]])
		_current = null
	# the next scene enters after this frame's processing, as a game's own scene change does: nodes
	# made while the engine is still processing can land where the freed ones were and be skipped
	_starting = true
	_start_next_scene.call_deferred()


func _start_next_scene() -> void:
	_starting = false
	_index += 1
	if _index >= _scenes.size():
		_done = true
		_say(["DONE", _frame])
		get_tree().quit()
		return
	var path := _scenes[_index]
	_say(["BEGIN", "scene", path])
	var packed = ResourceLoader.load(path)
	if packed is PackedScene:
		_current = packed.instantiate()
	if _current == null:
		_say(["END", "scene", path, "fail"])
		return
	get_tree().root.add_child(_current)
	_left = _scene_frames


func _exit_tree() -> void:
	if _done:
		return
	_say(["QUIT", _frame])  # the game ended itself (quit) before its frames were up
	if _mode == "main":
		_print_tree(_last_tree, _frame - _frame % SNAPSHOT_EVERY)


# --- play mode (the twin of run_tool3.gd's) -------------------------------------------------------------------


func _physics_process(_delta: float) -> void:
	if _mode != "play" or _done:
		return
	_physics += 1
	for event in _events.get(_physics, []):
		match event[0]:
			"press":
				if InputMap.has_action(event[1]):
					Input.action_press(event[1])
			"release":
				if InputMap.has_action(event[1]):
					Input.action_release(event[1])
			"click":
				_click(int(event[1]), true)
			"unclick":
				_click(int(event[1]), false)


func _buttons(node: Node, out: Array) -> void:
	# the buttons a player may press: not one that would end the game (its name or text says quit or exit)
	for child in node.get_children():
		if child is BaseButton and child.is_visible_in_tree() and not child.disabled:
			var words := (String(child.name) + " " + str(child.get("text"))).to_lower()
			if not ("quit" in words or "exit" in words):
				out.append(child)
		_buttons(child, out)


func _click(index: int, pressed: bool) -> void:
	var at = _clicked
	if pressed:
		var found := []
		_buttons(get_tree().root, found)
		if found.is_empty():
			return
		var button: Control = found[index % found.size()]
		var canvas: Vector2 = button.get_global_transform_with_canvas() * (button.size / 2)
		at = button.get_viewport().get_final_transform() * canvas
		_clicked = at
	if at == null:
		return
	var event := InputEventMouseButton.new()
	event.button_index = MOUSE_BUTTON_LEFT
	event.pressed = pressed
	event.position = at
	event.global_position = at
	Input.parse_input_event(event)


func _play_frame() -> void:
	var scene := get_tree().current_scene
	var id := scene.get_instance_id() if scene != null else 0
	if id != _scene_id:
		_scene_id = id
		_shot_at[_frame + 30] = true
	if _trace_every > 0 and _frame % _trace_every == 0:
		_write_trace()
	var shoot := _shots != "" and _kept(_frame)
	var near := false
	for d in range(1, _burst + 1):
		near = near or (_shots != "" and not shoot and (_kept(_frame - d) or (_kept(_frame + d) and _frame + d <= _frames)))
	if _frame >= _frames:
		_done = true
	if shoot or near:
		_shoot(_frame, "f" if shoot else "b")
	elif _done:
		_finish()


func _kept(frame: int) -> bool:
	return frame > 0 and (frame % _shot_every == 0 or _shot_at.has(frame))


func _shoot(frame: int, kind: String) -> void:
	await RenderingServer.frame_post_draw
	var image := get_viewport().get_texture().get_image()
	if image.get_width() > _shot_width:
		image.resize(_shot_width, maxi(1, roundi(image.get_height() * _shot_width / float(image.get_width()))),
			Image.INTERPOLATE_BILINEAR)
	image.save_png(_shots + "/%s%06d.png" % [kind, frame])
	if _done:
		_finish()


func _finish() -> void:
	if _trace_file != null:
		_trace_file.close()
	_say(["DONE", _frame])
	get_tree().quit()


func _clean(text) -> String:
	return str(text).replace("\t", " ").replace("\n", " ").replace("\r", " ").substr(0, 120)


func _font(node: Control) -> String:
	var font := node.get_theme_font("normal_font" if node is RichTextLabel else "font")
	var size := node.get_theme_font_size("normal_font_size" if node is RichTextLabel else "font_size")
	if node is Label and node.label_settings != null:
		font = node.label_settings.font if node.label_settings.font != null else font
		size = node.label_settings.font_size
	if font == null:
		return ""
	if font == ThemeDB.fallback_font:
		return "default:%d" % size
	return "size:%d" % size


func _canvas_rect(node: Node) -> String:
	var rect = null
	if node is Control:
		rect = Rect2(Vector2(), node.size)
	elif node is Sprite2D and node.texture != null:
		rect = node.get_rect()
	if rect == null:
		return ""
	var xf: Transform2D = node.get_global_transform_with_canvas()
	var box := Rect2(xf * rect.position, Vector2())
	for corner in [rect.position + Vector2(rect.size.x, 0), rect.position + Vector2(0, rect.size.y), rect.end]:
		box = box.expand(xf * corner)
	return "%.1f,%.1f,%.1f,%.1f" % [box.position.x, box.position.y, box.size.x, box.size.y]


func _trace_node(node: Node, path: String) -> String:
	var visible := ""
	var where := ""
	var turn := ""
	var size := ""
	if node is Node2D:
		visible = "1" if node.is_visible_in_tree() else "0"
		where = "%.2f,%.2f" % [node.global_position.x, node.global_position.y]
		turn = "%.4f" % node.global_rotation
		size = "%.4f,%.4f" % [node.global_scale.x, node.global_scale.y]
	elif node is Control:
		visible = "1" if node.is_visible_in_tree() else "0"
		where = "%.2f,%.2f" % [node.global_position.x, node.global_position.y]
		turn = "%.4f" % node.rotation
		size = "%.4f,%.4f" % [node.scale.x, node.scale.y]
	elif node is Node3D:
		visible = "1" if node.is_visible_in_tree() else "0"
		var o: Vector3 = node.global_position
		where = "%.3f,%.3f,%.3f" % [o.x, o.y, o.z]
	else:
		return ""
	var text := ""
	var font := ""
	if node is Label or node is Button or node is LineEdit or node is RichTextLabel:
		text = _clean(node.text)
		font = _font(node)
		if (node is Label or node is RichTextLabel) and node.visible_characters >= 0:
			text = _clean(node.text.substr(0, node.visible_characters))
	var anim := ""
	if node is AnimatedSprite2D:
		anim = "%s:%d" % [node.animation, node.frame]
	elif node is AnimationPlayer:
		anim = String(node.current_animation)
	var velocity := ""
	if node is RigidBody2D:
		velocity = "%.2f,%.2f" % [node.linear_velocity.x, node.linear_velocity.y]
	var script = node.get_script()
	return "\t".join(["N", path, node.get_class(), visible, where, turn, size, _canvas_rect(node), text, font, anim,
		velocity, script.resource_path if script != null else ""])


func _trace_walk(node: Node, path: String, out: PackedStringArray) -> void:
	for child in node.get_children():
		if child == self or out.size() >= 4000:
			continue
		var own := path + "/" + String(child.name) if path != "" else String(child.name)
		var line := _trace_node(child, own)
		if line != "":
			out.append(line)
		_trace_walk(child, own, out)


func _write_trace() -> void:
	if _trace_file == null:
		return
	var scene := get_tree().current_scene
	var size := get_viewport().get_visible_rect().size
	_trace_file.store_line("\t".join(["F", str(_frame), scene.scene_file_path if scene != null else "",
		"%.1f,%.1f" % [size.x, size.y]]))
	var out: PackedStringArray = []
	_trace_walk(get_tree().root, "", out)
	for line in out:
		_trace_file.store_line(line)
